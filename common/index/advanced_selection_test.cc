#include "common/index/advanced_selection.h"

#include <gtest/gtest.h>

#include <random>

#include "common/array/array.h"
#include "common/array/engine_stats.h"
#include "common/testing/test_util.h"

namespace zarrd {
namespace {

using nlohmann::json;
using testing::Pattern;

const json kZstd = json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},
                                   {"name":"zstd","configuration":{"level":1,"checksum":false}}])");

std::shared_ptr<Array> MakeArray(const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& chunks) {
  ArrayMetadata m;
  m.format = ZarrFormat::kV3;
  m.shape = shape;
  m.chunk_shape = chunks;
  m.dtype = DataType::kInt32;
  m.fill_value = FillValue(4, 0);
  m.codecs = kZstd;
  auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "a", m);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const auto values = Pattern(n);
  EXPECT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  return array;
}

int64_t Flat(const std::vector<int64_t>& shape, const std::vector<int64_t>& at) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + at[d];
  return f;
}

std::vector<int32_t> Read(const Array& array, const ResolvedAdvanced& sel) {
  std::vector<int32_t> out(sel.num_elements);
  Status s = array.ReadAdvanced(sel, out.data(), out.size() * 4);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// Shapes and placements printed by numpy for a = np.zeros((4, 5, 6)).
TEST(AdvancedSelection, ResultShapesMatchNumpy) {
  const std::vector<int64_t> shape = {4, 5, 6};
  auto list = [](std::vector<int64_t> v) { return AdvancedItem::Indices(std::move(v)); };
  auto slice = AdvancedItem::Basic(SelectionItem::Slice());
  auto index = [](int64_t i) { return AdvancedItem::Basic(SelectionItem::Index(i)); };
  struct Case {
    std::vector<AdvancedItem> items;
    AdvancedMode mode;
    std::vector<int64_t> points, expected;
  };
  const std::vector<Case> cases = {
      // a[np.ix_([1, 2, 1], [0], [5, 4])].shape
      {{list({1, 2, 1}), list({0}), list({5, 4})}, AdvancedMode::kOrthogonal, {}, {3, 1, 2}},
      // a.oindex[1, :, [0, 2]] (zarr) == a[1][:, [0, 2]]
      {{index(1), slice, list({0, 2})}, AdvancedMode::kOrthogonal, {}, {5, 2}},
      // a[:, [[0, 1, 2]], [[1, 2, 3]]].shape: adjacent, in place
      {{slice, list({0, 1, 2}), list({1, 2, 3})}, AdvancedMode::kVectorized, {1, 3}, {4, 1, 3}},
      // a[[0, 1], :, [2, 3]].shape: not adjacent, first
      {{list({0, 1}), slice, list({2, 3})}, AdvancedMode::kVectorized, {2}, {2, 5}},
      // a[:, 0, [1, 2]].shape: the integer joins the lists
      {{slice, index(0), list({1, 2})}, AdvancedMode::kVectorized, {2}, {4, 2}},
      // a[[1, 2], :, 0].shape: not adjacent
      {{list({1, 2}), slice, index(0)}, AdvancedMode::kVectorized, {2}, {2, 5}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    auto r = ResolveAdvanced(cases[i].items, cases[i].mode, cases[i].points, shape, 1 << 20);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->result_shape, cases[i].expected);
  }
}

TEST(AdvancedSelection, ErrorsNameTheAxisAndIndex) {
  const std::vector<int64_t> shape = {4, 5};
  auto r =
      ResolveAdvanced({AdvancedItem::Basic(SelectionItem::Slice()), AdvancedItem::Indices({1, -6})},
                      AdvancedMode::kOrthogonal, {}, shape, 100);
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(r.status().message().find("index -6 is out of bounds for axis 1 with size 5"),
            std::string::npos);
  r = ResolveAdvanced({AdvancedItem::Mask({1, 0, 1})}, AdvancedMode::kOrthogonal, {}, shape, 100);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveMask(std::vector<uint8_t>(19), shape).status().code(),
            StatusCode::kInvalidArgument);
  r = ResolveAdvanced({AdvancedItem::Indices({0, 1}), AdvancedItem::Indices({0})},
                      AdvancedMode::kVectorized, {2}, shape, 100);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  // 4 * 3 * 3 elements: over a limit of 30 before any list is expanded.
  r = ResolveAdvanced({AdvancedItem::Indices({0, 1, 2, 3}), AdvancedItem::Indices({0, 0, 0})},
                      AdvancedMode::kOrthogonal, {}, shape, 11);
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
}

TEST(AdvancedSelection, BlocksAreChunkSlices) {
  // zarr: z = zarr.zeros((10, 7), chunks=(3, 2)); z.blocks[-1, 1:3] is z[9:10, 2:6]
  auto s = BlockSelection({SelectionItem::Index(-1), SelectionItem::Slice(1, 3)}, {10, 7}, {3, 2});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(SelectionToString(*s), "9:10:1, 2:6:1");
  EXPECT_EQ(BlockSelection({SelectionItem::Index(4)}, {10, 7}, {3, 2}).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(BlockSelection({SelectionItem::Slice(0, 2, 2)}, {10, 7}, {3, 2}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(AdvancedSelection, RepeatedIndicesIntoOneChunkDecodeItOnce) {
  auto array = MakeArray({100, 30}, {10, 10});
  std::vector<int64_t> rows(1000, 34), cols(1000, -3);
  for (size_t i = 0; i < rows.size(); i += 2) rows[i] = 31;
  auto sel = ResolveAdvanced({AdvancedItem::Indices(rows), AdvancedItem::Indices(cols)},
                             AdvancedMode::kVectorized, {1000}, {100, 30}, 1 << 20);
  ASSERT_TRUE(sel.ok());
  const uint64_t before = GlobalEngineStats().chunks_decoded.load();
  auto out = Read(*array, *sel);
  EXPECT_EQ(GlobalEngineStats().chunks_decoded.load() - before, 1u);
  EXPECT_EQ(out[0], 7 * (31 * 30 + 27) + 1);
  EXPECT_EQ(out[1], 7 * (34 * 30 + 27) + 1);
  auto outer = ResolveAdvanced({AdvancedItem::Indices(rows), AdvancedItem::Indices({2, 2, 5})},
                               AdvancedMode::kOrthogonal, {}, {100, 30}, 1 << 20);
  const uint64_t again = GlobalEngineStats().chunks_decoded.load();
  Read(*array, *outer);
  EXPECT_EQ(GlobalEngineStats().chunks_decoded.load() - again, 1u);
}

// Random shapes, chunkings and index expressions against an element-by-element evaluation of
// numpy's rules (orthogonal: each list selects along its own axis; vectorized: the lists are
// zipped into points whose axis goes in place of adjacent lists, else first).
TEST(AdvancedSelection, PropertyMatchesNumpyRules) {
  std::mt19937_64 rng(20261203);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(round);
    const size_t rank = uniform(1, 3);
    std::vector<int64_t> shape(rank), chunks(rank);
    for (size_t d = 0; d < rank; ++d) {
      shape[d] = uniform(1, 9);
      chunks[d] = uniform(1, 4);
    }
    auto array = MakeArray(shape, chunks);
    int64_t total = 1;
    for (int64_t s : shape) total *= s;
    const auto values = Pattern(total);
    const bool vectorized = round % 2 == 1;
    const int64_t points = uniform(0, 6);
    std::vector<AdvancedItem> items;
    std::vector<std::vector<int64_t>> lists(rank);  // per dim: the indices it selects
    std::vector<int> kind(rank);                    // 0 integer, 1 slice, 2 list
    for (size_t d = 0; d < rank; ++d) {
      const int64_t n = shape[d];
      kind[d] = static_cast<int>(uniform(0, 2));
      if (kind[d] == 0) {
        const int64_t i = uniform(-n, n - 1);
        items.push_back(AdvancedItem::Basic(SelectionItem::Index(i)));
        lists[d] = {i < 0 ? i + n : i};
      } else if (kind[d] == 1) {
        const int64_t step = uniform(1, 3) * (uniform(0, 1) ? 1 : -1);
        const int64_t start = uniform(-n - 1, n + 1);
        auto item = SelectionItem::Slice(start, {}, step);
        items.push_back(AdvancedItem::Basic(item));
        auto r = ResolveSelection({item}, {n});
        for (int64_t k = 0; k < r->dims[0].count; ++k)
          lists[d].push_back(r->dims[0].start + k * r->dims[0].step);
      } else if (!vectorized && uniform(0, 1)) {
        std::vector<uint8_t> mask(n);
        for (int64_t i = 0; i < n; ++i) {
          mask[i] = uniform(0, 1);
          if (mask[i]) lists[d].push_back(i);
        }
        items.push_back(AdvancedItem::Mask(mask));
      } else {
        std::vector<int64_t> v(vectorized ? points : uniform(0, 7));
        for (auto& i : v) {
          i = uniform(-n, n - 1);
          lists[d].push_back(i < 0 ? i + n : i);
        }
        items.push_back(AdvancedItem::Indices(v));
      }
    }
    auto sel =
        ResolveAdvanced(items, vectorized ? AdvancedMode::kVectorized : AdvancedMode::kOrthogonal,
                        {points}, shape, 1 << 20);
    ASSERT_TRUE(sel.ok()) << sel.status().ToString();
    // The expected result, position by position.
    std::vector<int64_t> flats;  // the element of each result position
    std::vector<int64_t> expected_shape;
    bool any_list = false;
    for (int k : kind) any_list |= k == 2;
    if (!vectorized || !any_list) {
      for (size_t d = 0; d < rank; ++d)
        if (kind[d] != 0) expected_shape.push_back(lists[d].size());
      std::vector<size_t> at(rank, 0);
      bool empty = false;
      for (size_t d = 0; d < rank; ++d) empty |= lists[d].empty();
      while (!empty) {
        std::vector<int64_t> idx(rank);
        for (size_t d = 0; d < rank; ++d) idx[d] = lists[d][at[d]];
        flats.push_back(Flat(shape, idx));
        size_t d = rank;
        while (d-- > 0 && ++at[d] == lists[d].size()) at[d] = 0;
        if (d == SIZE_MAX) break;
      }
    } else {
      // Advanced dims: lists and integers; the point axis goes in place when they are adjacent.
      std::vector<size_t> adv, slices;
      for (size_t d = 0; d < rank; ++d) (kind[d] == 1 ? slices : adv).push_back(d);
      const bool adjacent = adv.back() - adv.front() + 1 == adv.size();
      size_t pos = 0;
      if (adjacent) {
        for (size_t d : slices) pos += d < adv.front();
      }
      std::vector<int64_t> axes_len;
      for (size_t d : slices) axes_len.push_back(lists[d].size());
      axes_len.insert(axes_len.begin() + pos, points);
      expected_shape = axes_len;
      int64_t count = 1;
      for (int64_t l : axes_len) count *= l;
      for (int64_t f = 0; f < count; ++f) {
        std::vector<int64_t> at(axes_len.size());
        int64_t rest = f;
        for (size_t a = axes_len.size(); a-- > 0;) {
          at[a] = rest % axes_len[a];
          rest /= axes_len[a];
        }
        std::vector<int64_t> idx(rank);
        const int64_t p = at[pos];
        at.erase(at.begin() + pos);
        for (size_t s = 0; s < slices.size(); ++s) idx[slices[s]] = lists[slices[s]][at[s]];
        for (size_t d : adv) idx[d] = kind[d] == 0 ? lists[d][0] : lists[d][p];
        flats.push_back(Flat(shape, idx));
      }
    }
    std::vector<int32_t> expected;
    for (int64_t f : flats) expected.push_back(values[f]);
    EXPECT_EQ(sel->result_shape, expected_shape);
    ASSERT_EQ(sel->num_elements, static_cast<int64_t>(expected.size()));
    EXPECT_EQ(Read(*array, *sel), expected);

    // Writes: each element named takes the value of the last position naming it, as in numpy.
    std::vector<int32_t> in(expected.size()), model = values;
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = -static_cast<int32_t>(i) - 1;
      model[flats[i]] = in[i];
    }
    ASSERT_TRUE(array->WriteAdvanced(*sel, in.data(), in.size() * 4).ok());
    std::vector<int32_t> all(total);
    ASSERT_TRUE(array->Read({}, all.data(), all.size() * 4).ok());
    EXPECT_EQ(all, model);
  }
}

}  // namespace
}  // namespace zarrd
