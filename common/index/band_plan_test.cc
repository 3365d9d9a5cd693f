#include "common/index/band_plan.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace zarrd {
namespace {

using nlohmann::json;

json Cases() {
  std::ifstream in(ZARRD_BAND_PLAN_CASES);
  return json::parse(in)["cases"];
}

Selection FromCase(const json& items) {
  Selection sel;
  for (const json& item : items) {
    if (item.is_number()) {
      sel.push_back(SelectionItem::Index(item.get<int64_t>()));
      continue;
    }
    auto part = [&](int i) {
      return item[i].is_null() ? std::optional<int64_t>() : item[i].get<int64_t>();
    };
    sel.push_back(SelectionItem::Slice(part(0), part(1), part(2)));
  }
  return sel;
}

// The bands against the rule by brute force, row by row: they cover the result once in order,
// each within max, and a chunk's rows are split only when they alone exceed max (none at all
// when one row does).
void CheckRule(const ResolvedSelection& sel, const std::vector<int64_t>& chunks, size_t item,
               uint64_t max_bytes, const std::vector<Band>& bands) {
  size_t d0 = 0;
  while (d0 < sel.dims.size() && sel.dims[d0].dropped) ++d0;
  if (d0 == sel.dims.size() || sel.num_elements() == 0) return;
  const DimSelection dim = sel.dims[d0];
  const uint64_t row_bytes = sel.num_bytes(item) / dim.count;
  if (bands.empty()) {
    ASSERT_GT(row_bytes, max_bytes);
    ASSERT_NE(max_bytes, 0u);
    return;
  }
  std::vector<int64_t> chunk_of;
  std::map<int64_t, int64_t> rows_in;
  for (int64_t k = 0; k < dim.count; ++k) {
    chunk_of.push_back((dim.start + k * dim.step) / chunks[d0]);
    ++rows_in[chunk_of.back()];
  }
  int64_t lo = 0;
  for (const Band& band : bands) {
    const DimSelection& b = band.selection.dims[d0];
    ASSERT_EQ(b.start, dim.start + lo * dim.step);
    ASSERT_GE(b.count, 1);
    ASSERT_EQ(band.offset, lo * row_bytes);
    ASSERT_EQ(band.nbytes, b.count * row_bytes);
    ASSERT_EQ(band.selection.result_shape[0], b.count);
    if (max_bytes) {
      ASSERT_LE(band.nbytes, max_bytes);
    }
    lo += b.count;
    if (lo < dim.count && chunk_of[lo - 1] == chunk_of[lo]) {
      ASSERT_NE(max_bytes, 0u);
      ASSERT_GT(rows_in[chunk_of[lo]] * row_bytes, max_bytes);
    }
  }
  ASSERT_EQ(lo, dim.count);
}

TEST(BandPlan, SharedCases) {
  const json cases = Cases();
  ASSERT_GT(cases.size(), 300u);
  for (const json& c : cases) {
    SCOPED_TRACE(c.dump());
    const auto shape = c["shape"].get<std::vector<int64_t>>();
    const auto chunks = c["chunks"].get<std::vector<int64_t>>();
    auto sel = ResolveSelection(FromCase(c["selection"]), shape);
    ASSERT_TRUE(sel.ok()) << sel.status().ToString();
    const size_t item = c["itemsize"].get<size_t>();
    const uint64_t max_bytes = c["max"].get<uint64_t>();
    const auto bands = PlanBands(
        *sel, chunks, item, {c["target"].get<uint64_t>(), max_bytes, c["max_bands"].get<size_t>()});
    const size_t axis = c["axis"].get<size_t>();
    json got = json::array();
    for (const Band& b : bands) {
      got.push_back(
          {b.selection.dims[axis].start, b.selection.dims[axis].count, b.offset, b.nbytes});
    }
    ASSERT_EQ(got, c["bands"]);
    CheckRule(*sel, chunks, item, max_bytes, bands);
  }
}

TEST(BandPlan, KeepsTheOtherDimensions) {
  auto sel = ResolveSelection(
      {SelectionItem::Index(2), SelectionItem::Slice({}, {}, -1), SelectionItem::Slice(1, 5)},
      {4, 100, 8});
  ASSERT_TRUE(sel.ok());
  const auto bands = PlanBands(*sel, {1, 10, 8}, 4, {.target_bytes = 16 * 25});
  ASSERT_EQ(bands.size(), 5u);  // 20 rows each: two chunks of 10 rows are closer to 25 than three
  for (const Band& b : bands) {
    EXPECT_EQ(b.selection.dims[0].start, 2);
    EXPECT_TRUE(b.selection.dims[0].dropped);
    EXPECT_EQ(b.selection.dims[2].start, 1);
    EXPECT_EQ(b.selection.dims[2].count, 4);
    EXPECT_EQ(b.selection.result_shape, (std::vector<int64_t>{b.selection.dims[1].count, 4}));
  }
  EXPECT_EQ(bands[1].selection.dims[1].start, 79);
}

}  // namespace
}  // namespace zarrd
