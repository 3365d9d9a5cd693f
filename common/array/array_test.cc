#include "common/array/array.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/testing/test_util.h"

using zarrd::testing::ForwardingStore;
using zarrd::testing::Pattern;
using zarrd::testing::Reference;
using zarrd::testing::V3Meta;

namespace zarrd {
namespace {

using nlohmann::json;

// Counts bytes handed out, to show which reads touch how much of a shard.
class CountingStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Result<bool> Get(const std::string& key, Bytes* out) override {
    auto r = ForwardingStore::Get(key, out);
    if (r.ok() && *r) bytes_read += out->size();
    return r;
  }
  Result<bool> GetRange(const std::string& key, ByteRange range, Bytes* out) override {
    auto r = ForwardingStore::GetRange(key, range, out);
    if (r.ok() && *r) bytes_read += out->size();
    return r;
  }
  std::atomic<size_t> bytes_read{0};
};

// Fails every change of a chunk key while `broken`: a crash between the steps of a resize.
class BrokenChunksStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Status Set(const std::string& key, ByteView value) override {
    return Broken(key) ? Internal("broken") : ForwardingStore::Set(key, value);
  }
  Status Delete(const std::string& key) override {
    return Broken(key) ? Internal("broken") : ForwardingStore::Delete(key);
  }
  bool broken = false;

 private:
  bool Broken(const std::string& key) const {
    return broken && key.find("/c/") != std::string::npos;
  }
};

const json kZstd = json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},
                                   {"name":"zstd","configuration":{"level":1,"checksum":false}}])");

class ArrayRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(ArrayRoundTrip, SelectionsMatchTheReference) {
  const std::string kind = GetParam();
  testing::TempDir dir;
  const bool local = kind == std::string("local-v2") || kind == std::string("local-raw");
  StoreHandle store(local ? *OpenLocalStore(dir.path()) : MakeMemoryStore());
  ArrayMetadata m;
  if (kind == std::string("local-raw")) {  // read by the store straight into the result
    m = V3Meta({13, 11, 5}, {4, 3, 5},
               json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])"));
  } else if (kind == std::string("sharded")) {
    m = V3Meta({13, 11, 5}, {8, 6, 5}, json::parse(R"([{"name":"sharding_indexed","configuration":{
      "chunk_shape":[4,3,5],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},
      {"name":"zstd","configuration":{"level":1}}],
      "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}}])"));
  } else if (kind == std::string("local-v2")) {
    m = V3Meta({13, 11, 5}, {4, 3, 2}, json());
    m.format = ZarrFormat::kV2;
    m.v2_order = 'F';
    m.v2_endian = Endian::kBig;
    m.v2_compressor = json::parse(R"({"id":"blosc","cname":"lz4","clevel":5,"shuffle":1})");
  } else {
    m = V3Meta({13, 11, 5}, {4, 3, 2},
               json::parse(R"([{"name":"transpose","configuration":{"order":[2,0,1]}},
                               {"name":"bytes","configuration":{"endian":"big"}},
                               {"name":"gzip","configuration":{"level":1}}])"));
  }
  auto array = Array::Create(store, "g/arr", m);
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  const auto shape = (*array)->metadata()->shape;
  auto values = Pattern(13 * 11 * 5);
  ASSERT_TRUE((*array)->Write({}, values.data(), values.size() * 4).ok());
  auto reopened = Array::Open(store, "g/arr");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  for (const char* text : {"", "...", "3", "-1, ::-1", "2:11:3, 1:, ::2", "::-4, 10:0:-3, 1",
                           "12:1:-5, ..., -2", "5:5", "100:", ":, 7, :",
                           // exactly one chunk (memory-v3) or inner chunk (sharded): decoded
                           // in place, or staged when the result is shared memory
                           "0:4, 0:3, 0:2", "4:8, 3:6, :"}) {
    SCOPED_TRACE(text);
    auto sel = ParseSelection(text);
    ASSERT_TRUE(sel.ok());
    auto resolved = ResolveSelection(*sel, shape);
    ASSERT_TRUE(resolved.ok());
    auto expected = Reference(values, shape, *resolved);
    std::vector<int32_t> got(expected.size(), -12345);
    Status s = (*reopened)->Read(*sel, got.data(), got.size() * 4);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(got, expected);
    std::vector<int32_t> staged(expected.size(), -12345);
    s = (*reopened)->Read(*sel, staged.data(), staged.size() * 4, {.result_shared = true});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(staged, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, ArrayRoundTrip,
                         ::testing::Values("memory-v3", "local-v2", "local-raw", "sharded"));

TEST(Array, MissingChunksReadAsFillAndFillChunksAreNotStored) {
  StoreHandle store(MakeMemoryStore());
  auto m = V3Meta({6, 6}, {3, 3}, kZstd);
  m.fill_value = *ParseFillValue(-1, DataType::kInt32, ZarrFormat::kV3);
  auto array = *Array::Create(store, "a", m);
  std::vector<int32_t> out(36);
  ASSERT_TRUE(array->Read({}, out.data(), out.size() * 4).ok());
  EXPECT_EQ(out, std::vector<int32_t>(36, -1));
  int32_t v = 5;
  ASSERT_TRUE(array->Write(*ParseSelection("4, 1"), &v, 4).ok());
  EXPECT_EQ(*store->List("a/c"), (std::vector<std::string>{"a/c/1/0"}));
  ASSERT_TRUE(array->Read({}, out.data(), out.size() * 4).ok());
  std::vector<int32_t> expected(36, -1);
  expected[4 * 6 + 1] = 5;
  EXPECT_EQ(out, expected);
  v = -1;  // back to fill: the chunk is deleted
  ASSERT_TRUE(array->Write(*ParseSelection("4, 1"), &v, 4).ok());
  EXPECT_TRUE(store->List("a/c")->empty());
}

TEST(Array, CorruptChunkIsDataLossNamingArrayAndChunk) {
  StoreHandle store(MakeMemoryStore());
  auto m = V3Meta(
      {4}, {2},
      json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}])"));
  auto array = *Array::Create(store, "x/y", m);
  std::vector<int32_t> v = {1, 2, 3, 4};
  ASSERT_TRUE(array->Write({}, v.data(), 16).ok());
  Bytes chunk;
  ASSERT_TRUE(*store->Get("x/y/c/1", &chunk));
  chunk[0] ^= 0xff;
  ASSERT_TRUE(store->Set("x/y/c/1", chunk).ok());
  Status s = array->Read({}, v.data(), 16);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("'x/y'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'x/y/c/1'"), std::string::npos) << s.message();
  ASSERT_TRUE(store->Set("x/y/c/1", Bytes{1, 2}).ok());  // truncated
  EXPECT_EQ(array->Read({}, v.data(), 16).code(), StatusCode::kDataLoss);
}

TEST(Array, RawChunkOfTheWrongSizeIsDataLossAndAbsentOnesAreFill) {
  testing::TempDir dir;
  StoreHandle store(*OpenLocalStore(dir.path()));
  auto m =
      V3Meta({6}, {2}, json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])"));
  m.fill_value = *ParseFillValue(-7, DataType::kInt32, ZarrFormat::kV3);
  auto array = *Array::Create(store, "raw", m);
  std::vector<int32_t> v = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(array->Write({}, v.data(), 24).ok());
  ASSERT_TRUE(store->Delete("raw/c/2").ok());
  std::vector<int32_t> got(6, 0);
  ASSERT_TRUE(array->Read({}, got.data(), 24).ok());
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2, 3, 4, -7, -7}));
  for (const Bytes& bad : {Bytes{1, 2, 3}, Bytes(12, 0)}) {
    ASSERT_TRUE(store->Set("raw/c/1", bad).ok());
    Status s = array->Read({}, got.data(), 24);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_NE(s.message().find("'raw/c/1'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("holds " + std::to_string(bad.size()) + " bytes"), std::string::npos)
        << s.message();
  }
}

TEST(Array, WrongBufferSizesAndExistingNodes) {
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "a", V3Meta({4}, {2}, kZstd));
  int32_t buf[4];
  EXPECT_EQ(array->Read({}, buf, 12).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(array->Write({}, buf, 20).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Array::Create(store, "a", V3Meta({4}, {2}, kZstd)).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(Array::Create(store, "a", V3Meta({8}, {2}, kZstd), /*overwrite=*/true).ok());
  EXPECT_EQ(Array::Open(store, "nothing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Array::Open(store, "../etc").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*Array::Open(store, "a"))->metadata()->shape, std::vector<int64_t>{8});
}

TEST(Array, SingleInnerChunkReadFetchesOnlyItsBytes) {
  auto counting = std::make_shared<CountingStore>(MakeMemoryStore());
  auto m = V3Meta({64, 64}, {64, 64}, json::parse(R"([{"name":"sharding_indexed","configuration":{
      "chunk_shape":[8,8],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],
      "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
      "index_location":"start"}}])"));
  auto array = *Array::Create(StoreHandle(counting), "s", m);
  auto values = Pattern(64 * 64);
  ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  counting->bytes_read = 0;
  int32_t one;
  ASSERT_TRUE(array->Read(*ParseSelection("17, 42"), &one, 4).ok());
  EXPECT_EQ(one, values[17 * 64 + 42]);
  // The index (64 entries x 16 bytes + 4) and one 8x8 int32 chunk (256 bytes), not the shard.
  EXPECT_EQ(counting->bytes_read.load(), 64u * 16 + 4 + 256);
}

// Which reads go to the GPU: chains it decodes, and under auto, reads of at least min_chunks
// chunks (a shard's inner chunks counted) of the families auto takes.
TEST(Array, DecodesOnGpuCountsTheChunksARead) {
  auto store = StoreHandle(MakeMemoryStore());
  const json gzip = json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},
                                    {"name":"gzip","configuration":{"level":1}}])");
  const json raw = json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])");
  const json sharded = json::parse(R"([{"name":"sharding_indexed","configuration":{
      "chunk_shape":[5,5],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},
      {"name":"zstd","configuration":{"level":1}}],
      "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}])");
  auto zstd_array = *Array::Create(store, "z", V3Meta({40, 40}, {10, 10}, kZstd));
  auto gzip_array = *Array::Create(store, "g", V3Meta({40, 40}, {10, 10}, gzip));
  auto raw_array = *Array::Create(store, "r", V3Meta({40, 40}, {10, 10}, raw));
  auto shard_array = *Array::Create(store, "s", V3Meta({40, 40}, {20, 20}, sharded));
  const std::vector<int64_t> shape = {40, 40};
  const auto all = *ResolveSelection({}, shape);                              // 16 chunks of 10x10
  const auto band = *ResolveSelection(*ParseSelection("5:15, 0:20"), shape);  // 2 x 2 of them
  auto policy = [](GpuDecodeMode mode, size_t min_chunks) {
    return GpuDecodePolicy{.mode = mode, .min_chunks = min_chunks};
  };
  // Whether auto sends the read to the GPU from `chunks` chunks on and not from one more.
  auto auto_takes_exactly = [&](const auto& array, const ResolvedSelection& selection,
                                size_t chunks) {
    return array->DecodesOnGpu(selection, policy(GpuDecodeMode::kAuto, chunks)) &&
           !array->DecodesOnGpu(selection, policy(GpuDecodeMode::kAuto, chunks + 1));
  };
  EXPECT_TRUE(auto_takes_exactly(zstd_array, all, 16));
  EXPECT_TRUE(auto_takes_exactly(zstd_array, band, 4));
  EXPECT_TRUE(zstd_array->DecodesOnGpu(band, policy(GpuDecodeMode::kAlways, 1024)));
  EXPECT_FALSE(zstd_array->DecodesOnGpu(all, policy(GpuDecodeMode::kNever, 1)));
  // gzip as zstd; a chain without a compressor never.
  EXPECT_TRUE(auto_takes_exactly(gzip_array, all, 16));
  EXPECT_TRUE(gzip_array->DecodesOnGpu(all, policy(GpuDecodeMode::kAlways, 1)));
  EXPECT_FALSE(raw_array->DecodesOnGpu(all, policy(GpuDecodeMode::kAlways, 1)));
  // 64 inner chunks of 5x5 in 4 shards; the band covers 2 x 4 of them.
  EXPECT_TRUE(auto_takes_exactly(shard_array, all, 64));
  EXPECT_TRUE(auto_takes_exactly(shard_array, band, 8));
}

TEST(Array, ConcurrentWritersOfDisjointPartsLoseNothing) {
  for (bool sharded : {false, true}) {
    SCOPED_TRACE(sharded);
    testing::TempDir dir;
    StoreHandle store(*OpenLocalStore(dir.path()));
    json codecs = sharded ? json::parse(R"([{"name":"sharding_indexed","configuration":{
      "chunk_shape":[4,8],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},
      {"name":"zstd","configuration":{"level":1}}]}}])")
                          : kZstd;
    auto array = *Array::Create(store, "c", V3Meta({16, 64}, {16, 64}, codecs));
    ThreadPool pool(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
      threads.emplace_back([&, t] {
        // Thread t owns column t of every 16-wide block: all threads share every chunk.
        for (int block = 0; block < 4; ++block) {
          std::vector<int32_t> col(16);
          for (int r = 0; r < 16; ++r) col[r] = t * 1000 + block * 100 + r + 1;
          Selection sel = {SelectionItem::Slice(), SelectionItem::Index(block * 16 + t)};
          Status s = array->Write(sel, col.data(), col.size() * 4, {.pool = &pool});
          EXPECT_TRUE(s.ok()) << s.ToString();
        }
      });
    }
    for (auto& t : threads) t.join();
    std::vector<int32_t> out(16 * 64);
    ASSERT_TRUE(array->Read({}, out.data(), out.size() * 4).ok());
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 64; ++c)
        ASSERT_EQ(out[r * 64 + c], (c % 16) * 1000 + (c / 16) * 100 + r + 1) << r << "," << c;
  }
}

TEST(Array, ResizeDeletesOutsideChunksAndResetsCutOffParts) {
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "r", V3Meta({10}, {4}, kZstd));
  auto values = Pattern(10);
  ASSERT_TRUE(array->Write({}, values.data(), 40).ok());
  ASSERT_TRUE(array->Resize({5}).ok());
  EXPECT_EQ(*store->List("r/c"), (std::vector<std::string>{"r/c/0", "r/c/1"}));
  ASSERT_TRUE(array->Resize({12}).ok());
  auto reopened = *Array::Open(store, "r");
  EXPECT_EQ(reopened->metadata()->shape, std::vector<int64_t>{12});
  std::vector<int32_t> out(12);
  ASSERT_TRUE(reopened->Read({}, out.data(), 48).ok());
  std::vector<int32_t> expected(12, 0);
  std::copy(values.begin(), values.begin() + 5, expected.begin());
  EXPECT_EQ(out, expected);
  EXPECT_EQ(array->Resize({1, 2}).code(), StatusCode::kInvalidArgument);
}

// The grid has 2**40 chunks: resizing walks the two stored ones, not the grid.
TEST(Array, ResizeOfAHugeSparseGridTouchesOnlyStoredChunks) {
  StoreHandle store(MakeMemoryStore());
  const int64_t n = int64_t{1} << 40;
  auto array = *Array::Create(store, "h", V3Meta({n, 3}, {1, 2}, kZstd));
  const int32_t one[3] = {1, 2, 3};
  ASSERT_TRUE(array->Write({SelectionItem::Index(5)}, one, sizeof one).ok());
  ASSERT_TRUE(array->Write({SelectionItem::Index(n - 1)}, one, sizeof one).ok());
  ASSERT_TRUE(array->Resize({10, 1}).ok());
  EXPECT_EQ(*store->List("h/c"), (std::vector<std::string>{"h/c/5/0"}));
  ASSERT_TRUE(array->Resize({n, 3}).ok());
  int32_t row[3];
  ASSERT_TRUE(array->Read({SelectionItem::Index(5)}, row, sizeof row).ok());
  EXPECT_EQ(std::vector<int32_t>(row, row + 3), (std::vector<int32_t>{1, 0, 0}));
  ASSERT_TRUE(array->Read({SelectionItem::Index(n - 1)}, row, sizeof row).ok());
  EXPECT_EQ(std::vector<int32_t>(row, row + 3), (std::vector<int32_t>{0, 0, 0}));
}

// Shrinking [1, 1200] to [1, 250] with a corrupt edge chunk c/0/2 fails before anything
// changed: the chunks beyond the new shape (c/0/10, c/0/11 come first in string order) stay.
TEST(Array, ResizeThatFailsChangesNothing) {
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "r", V3Meta({1, 1200}, {1, 100}, kZstd));
  auto values = Pattern(1200);
  ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  const std::string corrupt = "not zstd";
  ASSERT_TRUE(store
                  ->Set("r/c/0/2",
                        ByteView(reinterpret_cast<const uint8_t*>(corrupt.data()), corrupt.size()))
                  .ok());
  EXPECT_EQ(array->Resize({1, 250}).code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->List("r/c/")->size(), 12u);
  auto reopened = *Array::Open(store, "r");
  EXPECT_EQ(reopened->metadata()->shape, (std::vector<int64_t>{1, 1200}));
  std::vector<int32_t> tail(300);
  ASSERT_TRUE(reopened
                  ->Read({SelectionItem::Index(0), SelectionItem::Slice(900, 1200)}, tail.data(),
                         tail.size() * 4)
                  .ok());
  EXPECT_EQ(tail, std::vector<int32_t>(values.begin() + 900, values.end()));
}

// A resize that stops after its metadata write (here: every chunk change fails) leaves chunk
// parts outside the new shape; growing again must not show them.
TEST(Array, GrowAfterAnUnfinishedShrinkShowsTheFillValue) {
  auto broken = std::make_shared<BrokenChunksStore>(MakeMemoryStore());
  const StoreHandle store(broken);
  auto array = *Array::Create(store, "r", V3Meta({12}, {4}, kZstd));
  auto values = Pattern(12);
  ASSERT_TRUE(array->Write({}, values.data(), 48).ok());
  broken->broken = true;
  EXPECT_EQ(array->Resize({5}).code(), StatusCode::kInternal);
  EXPECT_EQ(Array::Open(store, "r").value()->metadata()->shape, std::vector<int64_t>{5});
  EXPECT_EQ(broken->List("r/c/")->size(), 3u);  // nothing cleared
  broken->broken = false;
  auto reopened = *Array::Open(store, "r");
  ASSERT_TRUE(reopened->Resize({12}).ok());
  std::vector<int32_t> out(12), expected(12, 0);
  std::copy(values.begin(), values.begin() + 5, expected.begin());
  ASSERT_TRUE(reopened->Read({}, out.data(), 48).ok());
  EXPECT_EQ(out, expected);
  EXPECT_EQ(*broken->List("r/c/"), (std::vector<std::string>{"r/c/0", "r/c/1"}));
}

TEST(Array, CancelledReadStops) {
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "a", V3Meta({64}, {1}, kZstd));
  std::atomic<bool> cancelled{true};
  std::vector<int32_t> out(64);
  EXPECT_EQ(array->Read({}, out.data(), 256, {.cancelled = &cancelled}).code(),
            StatusCode::kCancelled);
}

TEST(Array, AttributesPersistInBothFormats) {
  StoreHandle store(MakeMemoryStore());
  auto m2 = V3Meta({4}, {2}, json());
  m2.format = ZarrFormat::kV2;
  auto v2 = *Array::Create(store, "v2", m2);
  ASSERT_TRUE(v2->SetAttributes({{"units", "K"}}).ok());
  Bytes zattrs;
  ASSERT_TRUE(*store->Get("v2/.zattrs", &zattrs));
  EXPECT_EQ(json::parse(zattrs)["units"], "K");
  auto v3 = *Array::Create(store, "v3", V3Meta({4}, {2}, kZstd));
  ASSERT_TRUE(v3->SetAttributes({{"n", 1}}).ok());
  EXPECT_EQ((*Array::Open(store, "v3"))->metadata()->attributes["n"], 1);
}

}  // namespace
}  // namespace zarrd
