// DEVICE reads that decode on the GPU (DeviceSink::CommitEncoded): arrays written by the engine,
// read into GPU memory with gpu_decode always, compared with the written values.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cstring>

#include "common/array/array.h"
#include "common/array/engine_stats.h"
#include "common/cuda/cuda_test_util.h"
#include "common/cuda/decode_batcher.h"
#include "common/cuda/device_sink.h"
#include "common/cuda/encoded_batch.h"
#include "common/cuda/store_gpu.h"
#include "common/decode/zstd_test_util.h"
#include "common/metadata/json_document.h"
#include "common/testing/test_util.h"

namespace zarrd::cuda {
namespace {

using nlohmann::json;
using zarrd::testing::Pattern;
using zarrd::testing::Reference;

const GpuDecodePolicy kAlways{.mode = GpuDecodeMode::kAlways};

struct Case {
  const char* name;
  const char* compressor;  // v3 codec JSON, or a v2 compressor when `v2`
  const char* endian = "little";
  bool v2 = false;
  // A v3 transpose's order ("[1,0]"), or "F" for a v2 array in Fortran order.
  const char* dimension_order = nullptr;
  bool crc32c = false;  // a v3 crc32c after the compressor
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

ArrayMetadata Meta(const Case& c) {
  ArrayMetadata m;
  // 10 x 10 chunks of 768 bytes (blosc stores chunks under 128 bytes as copies), the last row
  // and column partial.
  m.shape = {150, 111};
  m.chunk_shape = {16, 12};
  m.dtype = DataType::kInt32;
  m.fill_value = FillValue(4, 0);
  if (c.v2) {
    m.format = ZarrFormat::kV2;
    m.v2_endian = std::string(c.endian) == "big" ? Endian::kBig : Endian::kLittle;
    m.v2_compressor = json::parse(c.compressor);
    m.codecs = json();
    if (c.dimension_order) m.v2_order = c.dimension_order[0];
    return m;
  }
  m.format = ZarrFormat::kV3;
  m.codecs = json::array(
      {{{"name", "bytes"}, {"configuration", {{"endian", c.endian}}}}, json::parse(c.compressor)});
  if (c.dimension_order) {
    const json transpose = {{"name", "transpose"},
                            {"configuration", {{"order", json::parse(c.dimension_order)}}}};
    m.codecs.insert(m.codecs.begin(), transpose);
  }
  if (c.crc32c) m.codecs.push_back(json{{"name", "crc32c"}});
  return m;
}

class GpuDecodeRead : public ::testing::TestWithParam<Case> {};

// Writes a pattern whose rows 144.. hold the fill value: their chunks (the last row) are absent.
std::vector<int32_t> WriteLastRowAbsent(Array& array) {
  const auto shape = array.metadata()->shape;
  auto values = Pattern(shape[0] * shape[1]);
  for (int64_t i = 144 * shape[1]; i < shape[0] * shape[1]; ++i) values[i] = 0;
  EXPECT_TRUE(array.Write({}, values.data(), values.size() * 4).ok());
  return values;
}

TEST_P(GpuDecodeRead, SelectionsMatchTheWrittenValues) {
  ZARRD_REQUIRE_GPU();
  const Case c = GetParam();
  auto array = Array::Create(StoreHandle(MakeMemoryStore()), "g/a", Meta(c));
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  const auto shape = (*array)->metadata()->shape;
  const auto values = WriteLastRowAbsent(**array);
  StagingPool staging(0, 8);
  ThreadPool pool(3);
  for (const char* text : {"", "7", "-1, ::-1", "2:149:3, 1:", "::-4, 100:0:-3",
                           "143:, 105:", "5:5", ":, 7", "0, 0", "140:148, 10:20", "16:32, 24:36"}) {
    SCOPED_TRACE(text);
    auto resolved = ResolveSelection(*ParseSelection(text), shape);
    ASSERT_TRUE(resolved.ok());
    const auto expected = Reference(values, shape, *resolved);
    const size_t nbytes = std::max<size_t>(4, expected.size() * 4);
    uint8_t* out;
    ASSERT_EQ(cudaMalloc(&out, nbytes), cudaSuccess);
    for (bool joined : {false, true}) {
      SCOPED_TRACE(joined ? "finished on a stream" : "finished on the host");
      cudaMemset(out, 0xAB, nbytes);
      cudaStream_t join = nullptr;
      if (joined) {
        ASSERT_EQ(cudaStreamCreateWithFlags(&join, cudaStreamNonBlocking), cudaSuccess);
      }
      const uint64_t before = GlobalEngineStats().chunks_gpu_decoded.load();
      DeviceSink sink(staging, out, 4, join, kAlways);
      Status s = (*array)->ReadToSink(*resolved, sink, {.pool = &pool});
      ASSERT_TRUE(s.ok()) << s.ToString();
      if (join) {
        ASSERT_EQ(cudaStreamSynchronize(join), cudaSuccess);
      }
      EXPECT_EQ(testing::ToHost<int32_t>(out, expected.size()), expected);
      const uint64_t on_gpu = GlobalEngineStats().chunks_gpu_decoded.load() - before;
      if (std::string(text).empty()) {
        EXPECT_EQ(on_gpu, 9u * 10);
      }
      if (join) cudaStreamDestroy(join);
    }
    cudaFree(out);
  }
}

TEST_P(GpuDecodeRead, ACorruptChunkIsDataLossNamingIt) {
  ZARRD_REQUIRE_GPU();
  const Case c = GetParam();
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "g/a", Meta(c));
  const auto shape = array->metadata()->shape;
  const auto values = Pattern(shape[0] * shape[1]);
  ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  const std::string key = c.v2 ? "g/a/1.2" : "g/a/c/1/2";
  Bytes stored;
  ASSERT_TRUE(*store->Get(key, &stored));
  stored.resize(stored.size() / 2);  // truncated
  ASSERT_TRUE(store->Set(key, stored).ok());
  StagingPool staging(0, 4);
  uint8_t* out;
  ASSERT_EQ(cudaMalloc(&out, values.size() * 4), cudaSuccess);
  DeviceSink sink(staging, out, 4, nullptr, kAlways);
  Status s = array->ReadToSink(*ResolveSelection({}, shape), sink);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_NE(s.message().find("array 'g/a' chunk '" + key + "'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("on the GPU"), std::string::npos) << s.message();
  if (c.crc32c) {
    EXPECT_NE(s.message().find("crc32c checksum mismatch"), std::string::npos) << s.message();
    // A chunk that decodes but whose stored crc32c is wrong.
    ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
    ASSERT_TRUE(*store->Get(key, &stored));
    stored.back() ^= 1;
    ASSERT_TRUE(store->Set(key, stored).ok());
    DeviceSink checked(staging, out, 4, nullptr, kAlways);
    s = array->ReadToSink(*ResolveSelection({}, shape), checked);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
    EXPECT_NE(s.message().find("array 'g/a' chunk '" + key + "'"), std::string::npos);
    EXPECT_NE(s.message().find("crc32c checksum mismatch"), std::string::npos) << s.message();
  }
  // The sink and the staging pool are usable again: a read of the other chunks succeeds.
  auto rest = *ResolveSelection(*ParseSelection("32:, :"), shape);
  DeviceSink again(staging, out, 4, nullptr, kAlways);
  s = array->ReadToSink(rest, again);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(testing::ToHost<int32_t>(out, 118 * 111), Reference(values, shape, rest));
  cudaFree(out);
}

// The inner chunks of shards decode on the GPU one by one; a corrupt one is DATA_LOSS naming its
// shard and position.
TEST(GpuDecodeShards, InnerChunksDecodeOnTheGpu) {
  ZARRD_REQUIRE_GPU();
  ArrayMetadata m = Meta(Case{"zstd", R"({"name":"zstd","configuration":{"level":3}})"});
  m.codecs = json::parse(R"([{"name":"sharding_indexed","configuration":{"chunk_shape":[8,6],
      "codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd",
      "configuration":{"level":3}}],"index_codecs":[{"name":"bytes","configuration":
      {"endian":"little"}},{"name":"crc32c"}]}}])");
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "g/s", m);
  const auto shape = array->metadata()->shape;
  const auto values = WriteLastRowAbsent(*array);
  StagingPool staging(0, 8);
  ThreadPool pool(3);
  uint8_t* out;
  ASSERT_EQ(cudaMalloc(&out, values.size() * 4), cudaSuccess);
  // Stored inner chunks: 18 rows (the 10th row of shards is absent) of 19 (the last shard's
  // second column of inner chunks lies past the array's 111 columns).
  for (auto [text, stored] : std::vector<std::pair<const char*, uint64_t>>{
           {"", 18 * 19}, {"-1, ::-1", 0}, {"2:149:3, 1:", 18 * 19}, {"140:148, 10:20", 3}}) {
    SCOPED_TRACE(text);
    auto resolved = *ResolveSelection(*ParseSelection(text), shape);
    const auto expected = Reference(values, shape, resolved);
    const uint64_t before = GlobalEngineStats().chunks_gpu_decoded.load();
    DeviceSink sink(staging, out, 4, nullptr, kAlways);
    Status s = array->ReadToSink(resolved, sink, {.pool = &pool});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(testing::ToHost<int32_t>(out, expected.size()), expected);
    EXPECT_EQ(GlobalEngineStats().chunks_gpu_decoded.load() - before, stored);
  }
  // The first inner chunk of shard c/1/2 with its frame's magic number zeroed; the index (after
  // the inner chunks: 4 x (offset, size) and a crc32c) is untouched.
  const std::string key = "g/s/c/1/2";
  Bytes stored;
  ASSERT_TRUE(*store->Get(key, &stored));
  const size_t index_at = stored.size() - (4 * 16 + 4);
  uint64_t offset;
  std::memcpy(&offset, stored.data() + index_at, 8);
  ASSERT_LT(offset + 4, index_at);
  std::memset(stored.data() + offset, 0, 4);
  ASSERT_TRUE(store->Set(key, stored).ok());
  DeviceSink sink(staging, out, 4, nullptr, kAlways);
  Status s = array->ReadToSink(*ResolveSelection({}, shape), sink, {.pool = &pool});
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_NE(s.message().find("chunk '" + key + "' inner chunk '0'"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("on the GPU"), std::string::npos) << s.message();
  cudaFree(out);
}

// A GPU store that counts the chunk values it sends to the host.
class ChunkDownloadCounter final : public Store, public DeviceResidentStore {
 public:
  explicit ChunkDownloadCounter(std::shared_ptr<Store> gpu) : gpu_(std::move(gpu)) {}
  Result<bool> Get(const std::string& key, Bytes* out) override {
    if (!IsMetadataDocumentKey(key)) ++downloads;
    return gpu_->Get(key, out);
  }
  Result<bool> GetRange(const std::string& key, ByteRange range, Bytes* out) override {
    if (!IsMetadataDocumentKey(key)) ++downloads;
    return gpu_->GetRange(key, range, out);
  }
  Status Set(const std::string& key, ByteView value) override { return gpu_->Set(key, value); }
  Status Delete(const std::string& key) override { return gpu_->Delete(key); }
  Result<std::vector<std::string>> List(const std::string& prefix) override {
    return gpu_->List(prefix);
  }
  std::string Describe() const override { return gpu_->Describe(); }
  Result<std::optional<DeviceValue>> GetDevice(const std::string& key) override {
    return AsDeviceResident(*gpu_)->GetDevice(key);
  }
  int device() const override { return AsDeviceResident(*gpu_)->device(); }
  std::atomic<int> downloads{0};

 private:
  std::shared_ptr<Store> gpu_;
};

TEST_P(GpuDecodeRead, FromTheGpuStoreTheChunksDecodeWhereTheyAre) {
  ZARRD_REQUIRE_GPU();
  const Case c = GetParam();
  auto store =
      std::make_shared<ChunkDownloadCounter>(*MakeGpuStore({.name = "encoded",
                                                            .device = 0,
                                                            .capacity_bytes = 64 << 20,
                                                            .on_host = IsMetadataDocumentKey}));
  auto array = *Array::Create(StoreHandle(store), "g/a", Meta(c));
  const auto shape = array->metadata()->shape;
  const auto values = WriteLastRowAbsent(*array);
  StagingPool staging(0, 8);
  ThreadPool pool(3);
  uint8_t* out;
  ASSERT_EQ(cudaMalloc(&out, values.size() * 4), cudaSuccess);
  // Stored chunks each selection touches: the last row of chunks is absent.
  for (auto [text, stored] : std::vector<std::pair<const char*, uint64_t>>{
           {"", 90}, {"-1, ::-1", 0}, {"2:149:3, 1:", 90}, {"140:148, 10:20", 2}}) {
    SCOPED_TRACE(text);
    auto resolved = *ResolveSelection(*ParseSelection(text), shape);
    const auto expected = Reference(values, shape, resolved);
    store->downloads = 0;
    const uint64_t before = GlobalEngineStats().chunks_gpu_decoded.load();
    DeviceSink sink(staging, out, 4, nullptr, kAlways);
    Status s = array->ReadToSink(resolved, sink, {.pool = &pool});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(testing::ToHost<int32_t>(out, expected.size()), expected);
    const uint64_t on_gpu = GlobalEngineStats().chunks_gpu_decoded.load() - before;
    EXPECT_EQ(store->downloads.load(), 0);
    EXPECT_EQ(on_gpu, stored);
  }
  // A zstd chunk of more blocks than the kernels' split holds (only its head is on the host, so
  // it is handed over all the same) decodes whole on the GPU: its bytes re-encoded by libzstd's
  // decoder as a frame of one-byte raw blocks.
  if (std::string(c.compressor).find(R"("name":"zstd")") != std::string::npos) {
    const std::string key = "g/a/c/1/2";
    Bytes stored, raw;
    ASSERT_TRUE(*store->Get(key, &stored));
    const size_t trailer = c.crc32c ? 4 : 0;
    ASSERT_TRUE(
        decode::testing::LibDecompress(stored.data(), stored.size() - trailer, 1 << 20, &raw));
    Bytes frame = decode::testing::OneByteBlocks(raw);
    if (c.crc32c) {
      const uint32_t crc = Crc32c(frame);  // little-endian, as the codec stores it
      frame.insert(frame.end(), reinterpret_cast<const uint8_t*>(&crc),
                   reinterpret_cast<const uint8_t*>(&crc) + 4);
    }
    ASSERT_TRUE(store->Set(key, frame).ok());
    store->downloads = 0;
    DeviceSink sink(staging, out, 4, nullptr, kAlways);
    Status s = array->ReadToSink(*ResolveSelection({}, shape), sink, {.pool = &pool});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(testing::ToHost<int32_t>(out, values.size()), values);
    EXPECT_EQ(store->downloads.load(), 0);
  }
  // A corrupt chunk held on the GPU is DATA_LOSS naming it, as from any other store.
  const std::string key = c.v2 ? "g/a/1.2" : "g/a/c/1/2";
  Bytes stored;
  ASSERT_TRUE(*store->Get(key, &stored));
  stored.resize(stored.size() / 2);
  ASSERT_TRUE(store->Set(key, stored).ok());
  DeviceSink sink(staging, out, 4, nullptr, kAlways);
  Status s = array->ReadToSink(*ResolveSelection({}, shape), sink, {.pool = &pool});
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_NE(s.message().find("chunk '" + key + "'"), std::string::npos) << s.message();
  cudaFree(out);
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, GpuDecodeRead,
    ::testing::Values(
        Case{"zstd", R"({"name":"zstd","configuration":{"level":3,"checksum":true}})"},
        Case{"zstd_big", R"({"name":"zstd","configuration":{"level":1}})", "big"},
        Case{"blosc_lz4_shuffle", R"({"name":"blosc","configuration":{"cname":"lz4","clevel":5,
             "shuffle":"shuffle","typesize":4}})"},
        Case{"blosc_lz4_bitshuffle_big", R"({"name":"blosc","configuration":{"cname":"lz4",
             "clevel":5,"shuffle":"bitshuffle","typesize":4}})",
             "big"},
        Case{"blosc_zstd", R"({"name":"blosc","configuration":{"cname":"zstd","clevel":5,
             "shuffle":"shuffle","typesize":4}})"},
        Case{"gzip", R"({"name":"gzip","configuration":{"level":5}})"},
        Case{"v2_zlib_big", R"({"id":"zlib","level":1})", "big", true},
        Case{"v2_blosc_lz4", R"({"id":"blosc","cname":"lz4","clevel":5,"shuffle":1,
             "blocksize":0})",
             "little", true},
        Case{"zstd_transposed_crc32c_big", R"({"name":"zstd","configuration":{"level":3}})", "big",
             false, "[1,0]", true},
        Case{"gzip_crc32c", R"({"name":"gzip","configuration":{"level":5}})", "little", false,
             nullptr, true},
        Case{"v2_blosc_bitshuffle_fortran", R"({"id":"blosc","cname":"lz4","clevel":5,
             "shuffle":2,"blocksize":0})",
             "little", true, "F"}),
    [](const auto& info) { return std::string(info.param.name); });

// auto leaves reads of few chunks, and gzip, on the host; never leaves every read there.
TEST(GpuDecodePolicy, AutoAndNever) {
  ZARRD_REQUIRE_GPU();
  Case zstd{"zstd", R"({"name":"zstd","configuration":{"level":1}})"};
  Case gzip{"gzip", R"({"name":"gzip","configuration":{"level":1}})"};
  auto zstd_array = *Array::Create(StoreHandle(MakeMemoryStore()), "a", Meta(zstd));
  auto gzip_array = *Array::Create(StoreHandle(MakeMemoryStore()), "a", Meta(gzip));
  const auto shape = zstd_array->metadata()->shape;
  const auto values = Pattern(shape[0] * shape[1]);
  ASSERT_TRUE(zstd_array->Write({}, values.data(), values.size() * 4).ok());
  ASSERT_TRUE(gzip_array->Write({}, values.data(), values.size() * 4).ok());
  StagingPool staging(0, 4);
  uint8_t* out;
  ASSERT_EQ(cudaMalloc(&out, values.size() * 4), cudaSuccess);
  struct Run {
    Array* array;
    GpuDecodePolicy policy;
    const char* selection;
    uint64_t on_gpu;
  };
  for (const Run& run : {Run{zstd_array.get(), {}, "0:4, 0:3", 0}, Run{zstd_array.get(), {}, "", 0},
                         Run{zstd_array.get(),
                             {.min_chunks = 100, .auto_families = {CompressorFamily::kZstd}},
                             "",
                             10 * 10},
                         Run{zstd_array.get(),
                             {.min_chunks = 101, .auto_families = {CompressorFamily::kZstd}},
                             "",
                             0},
                         Run{gzip_array.get(), {.auto_families = {CompressorFamily::kZstd}}, "", 0},
                         Run{zstd_array.get(), {.mode = GpuDecodeMode::kNever}, "", 0},
                         Run{zstd_array.get(),
                             {.mode = GpuDecodeMode::kAuto,
                             .min_chunks = 1,
                             .auto_families = {CompressorFamily::kZstd}},
                             "0:4, 0:3",
                             1}}) {
    SCOPED_TRACE(run.selection);
    Array* array = run.array;
    auto resolved = *ResolveSelection(*ParseSelection(run.selection), shape);
    const uint64_t before = GlobalEngineStats().chunks_gpu_decoded.load();
    DeviceSink sink(staging, out, 4, nullptr, run.policy);
    ASSERT_TRUE(array->ReadToSink(resolved, sink).ok());
    EXPECT_EQ(GlobalEngineStats().chunks_gpu_decoded.load() - before, run.on_gpu);
    const auto expected = Reference(values, shape, resolved);
    EXPECT_EQ(testing::ToHost<int32_t>(out, expected.size()), expected);
  }
  cudaFree(out);
}

// Under auto, chunks that come while the GPU's only batch slot is decoding go to the CPUs: 3000
// chunks (three launches' worth), the values equal whichever decoded each.
TEST(GpuDecodePolicy, AutoDecodesOnTheCpusWhileTheGpuIsBusy) {
  ZARRD_REQUIRE_GPU();
  Case zstd{"zstd", R"({"name":"zstd","configuration":{"level":1}})"};
  ArrayMetadata m = Meta(zstd);
  m.shape = {50 * 16, 60 * 12};
  auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "a", m);
  const auto values = Pattern(m.shape[0] * m.shape[1]);
  ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  StagingPool staging(0, 8, /*batch_slots=*/1);
  ThreadPool pool(3);
  uint8_t* out;
  ASSERT_EQ(cudaMalloc(&out, values.size() * 4), cudaSuccess);
  const GpuDecodePolicy policy{
      .mode = GpuDecodeMode::kAuto, .min_chunks = 1, .auto_families = {CompressorFamily::kZstd}};
  const auto all = *ResolveSelection({}, m.shape);
  const uint64_t before = GlobalEngineStats().chunks_gpu_decoded.load();
  DeviceSink sink(staging, out, 4, nullptr, policy);
  Status s = array->ReadToSink(all, sink, {.pool = &pool});
  ASSERT_TRUE(s.ok()) << s.ToString();
  const uint64_t on_gpu = GlobalEngineStats().chunks_gpu_decoded.load() - before;
  std::printf("%llu of 3000 chunks decoded on the GPU\n", static_cast<unsigned long long>(on_gpu));
  EXPECT_GT(on_gpu, 0u);
  EXPECT_LT(on_gpu, 3000u);
  EXPECT_EQ(testing::ToHost<int32_t>(out, values.size()), values);
  cudaFree(out);
}

// With the GPU's memory all but full (48 MiB left: kernels still launch), no batch can open (32
// chunks of 1 MiB need about 260 MiB): under auto the chunks decode on the CPUs (their upload
// slot was made before; chunks held in a GPU store come down first), under always the read fails
// with RESOURCE_EXHAUSTED; once the memory is free again, auto decodes on the GPU.
TEST(GpuDecodePolicy, AutoDecodesOnTheCpusWhenTheGpuHasNoMemoryForABatch) {
  ZARRD_REQUIRE_GPU();
  Case zstd{"zstd", R"({"name":"zstd","configuration":{"level":1}})"};
  ArrayMetadata m = Meta(zstd);
  m.chunk_shape = {512, 512};  // 1 MiB
  m.shape = {4 * 512, 8 * 512};
  const auto values = Pattern(m.shape[0] * m.shape[1]);
  const auto all = *ResolveSelection({}, m.shape);
  const GpuDecodePolicy auto_policy{
      .mode = GpuDecodeMode::kAuto, .min_chunks = 1, .auto_families = {CompressorFamily::kZstd}};
  uint8_t* out;
  ASSERT_EQ(cudaMalloc(&out, values.size() * 4), cudaSuccess);
  for (bool gpu_store : {false, true}) {
    SCOPED_TRACE(gpu_store ? "chunks in a GPU store" : "chunks in host memory");
    std::shared_ptr<Store> store = gpu_store ? *MakeGpuStore({.name = "oom",
                                                              .device = 0,
                                                              .capacity_bytes = 256 << 20,
                                                              .on_host = IsMetadataDocumentKey})
                                             : MakeMemoryStore();
    auto array = *Array::Create(StoreHandle(store), "a", m);
    ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
    StagingPool staging(0, /*max_slots=*/1);
    ThreadPool pool(3);
    auto read = [&](const GpuDecodePolicy& policy, uint64_t* on_gpu) {
      cudaMemset(out, 0xff, values.size() * 4);
      const uint64_t before = GlobalEngineStats().chunks_gpu_decoded.load();
      DeviceSink sink(staging, out, 4, nullptr, policy);
      Status s = array->ReadToSink(all, sink, {.pool = &pool});
      *on_gpu = GlobalEngineStats().chunks_gpu_decoded.load() - before;
      return s;
    };
    uint64_t on_gpu = 0;
    ASSERT_TRUE(read({.mode = GpuDecodeMode::kNever}, &on_gpu).ok());  // makes the upload slot

    constexpr size_t kLeft = size_t{48} << 20;
    size_t free_bytes = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
    void* filler = nullptr;
    for (size_t size = free_bytes - kLeft; size > kLeft; size -= size_t{16} << 20) {
      if (cudaMalloc(&filler, size) == cudaSuccess) break;
      (void)cudaGetLastError();
      filler = nullptr;
    }
    ASSERT_NE(filler, nullptr);
    cudaMemGetInfo(&free_bytes, &total);
    std::printf("GPU memory filled: %zu MiB free of %zu\n", free_bytes >> 20, total >> 20);

    Status s = read(auto_policy, &on_gpu);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(on_gpu, 0u);
    EXPECT_EQ(testing::ToHost<int32_t>(out, values.size()), values);
    s = read(kAlways, &on_gpu);
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
    EXPECT_NE(s.message().find("array 'a' chunk 'a/c/"), std::string::npos) << s.message();

    cudaFree(filler);
    s = read(auto_policy, &on_gpu);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(on_gpu, 32u);
    EXPECT_EQ(testing::ToHost<int32_t>(out, values.size()), values);
  }
  cudaFree(out);
}

// PrewarmBatchSlots makes every batch slot at once, as large as batches of 1 MiB chunks need: a
// read of such chunks afterwards makes and grows nothing, and its values are the written ones.
TEST(GpuDecodeBatches, PrewarmedSlotsServeALargeReadAsTheyAre) {
  ZARRD_REQUIRE_GPU();
  for (
      const char* compressor :
      {R"({"name":"zstd","configuration":{"level":1}})",
       R"({"name":"blosc","configuration":{"cname":"zstd","clevel":1,"shuffle":"shuffle","typesize":4}})"}) {
    SCOPED_TRACE(compressor);
    Case c{"prewarm", compressor};
    ArrayMetadata m = Meta(c);
    m.chunk_shape = {512, 512};  // 1 MiB
    m.shape = {4 * 512, 2 * 512};
    auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "a", m);
    const auto values = Pattern(m.shape[0] * m.shape[1]);
    ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
    StagingPool staging(0, 8);
    ASSERT_TRUE(PrewarmBatchSlots(staging).ok());
    StagingPool& batches = staging.batch_pool();
    EXPECT_EQ(batches.slots(), StagingPool::kBatchSlots);
    const uint64_t pinned = batches.pinned_bytes();
    EXPECT_GE(pinned, StagingPool::kBatchSlots * EncodedBatch::kDecodedBytes);
    ThreadPool pool(4);
    uint8_t* out;
    ASSERT_EQ(cudaMalloc(&out, values.size() * 4), cudaSuccess);
    const uint64_t before = GlobalEngineStats().chunks_gpu_decoded.load();
    DeviceSink sink(staging, out, 4, nullptr, kAlways);
    Status s = array->ReadToSink(*ResolveSelection({}, m.shape), sink, {.pool = &pool});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(GlobalEngineStats().chunks_gpu_decoded.load() - before, 8u);
    EXPECT_EQ(batches.slots(), StagingPool::kBatchSlots);
    EXPECT_EQ(batches.pinned_bytes(), pinned);
    EXPECT_EQ(testing::ToHost<int32_t>(out, values.size()), values);
    cudaFree(out);
  }
}

// Chunks of 1 MiB, several threads at once: one shared batch per read, as large as the read.
TEST(GpuDecodeBatches, LargeChunksInFullAndPartialBatches) {
  ZARRD_REQUIRE_GPU();
  Case c{"zstd", R"({"name":"zstd","configuration":{"level":1}})"};
  ArrayMetadata m = Meta(c);
  m.shape = {512 * 9 + 100, 512 * 9};
  m.chunk_shape = {512, 512};
  auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "big", m);
  const auto values = Pattern(m.shape[0] * m.shape[1]);
  ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  StagingPool staging(0, 8);
  ThreadPool pool(3);
  for (const char* text : {"", "::7, 100:4000:3"}) {
    SCOPED_TRACE(text);
    auto resolved = *ResolveSelection(*ParseSelection(text), m.shape);
    const auto expected = Reference(values, m.shape, resolved);
    uint8_t* out;
    ASSERT_EQ(cudaMalloc(&out, expected.size() * 4), cudaSuccess);
    DeviceSink sink(staging, out, 4, nullptr, kAlways);
    Status s = array->ReadToSink(resolved, sink, {.pool = &pool});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(testing::ToHost<int32_t>(out, expected.size()), expected);
    cudaFree(out);
  }
}

// 2500 chunks (more than EncodedBatch::kMaxChunks, so several launches) from 4 threads, blosc
// lz4 containers with every 7th chunk a blosc zstd one (launches of their own, with zstd
// workspaces); then one lz4 chunk corrupt among them.
TEST(GpuDecodeBatches, ManyChunksOfTwoKernelsAndACorruptOne) {
  ZARRD_REQUIRE_GPU();
  Case lz4{"lz4", R"({"name":"blosc","configuration":{"cname":"lz4","clevel":5,
           "shuffle":"shuffle","typesize":4}})"};
  Case zstd{"zstd", R"({"name":"blosc","configuration":{"cname":"zstd","clevel":5,
            "shuffle":"shuffle","typesize":4}})"};
  ArrayMetadata m = Meta(lz4);
  m.shape = {50 * 16, 50 * 12};
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "many", m);
  ArrayMetadata mz = Meta(zstd);
  mz.shape = m.shape;
  StoreHandle zstd_store(MakeMemoryStore());
  auto zstd_array = *Array::Create(zstd_store, "many", mz);
  const auto values = Pattern(m.shape[0] * m.shape[1]);
  ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  ASSERT_TRUE(zstd_array->Write({}, values.data(), values.size() * 4).ok());
  for (int i = 0; i < 50; ++i) {
    for (int j = 0; j < 50; ++j) {
      if ((i * 50 + j) % 7 != 0) continue;
      const std::string key = "many/c/" + std::to_string(i) + "/" + std::to_string(j);
      Bytes stored;
      ASSERT_TRUE(*zstd_store->Get(key, &stored));
      ASSERT_TRUE(store->Set(key, stored).ok());
    }
  }
  StagingPool staging(0, 8);
  ThreadPool pool(3);
  uint8_t* out;
  ASSERT_EQ(cudaMalloc(&out, values.size() * 4), cudaSuccess);
  const auto all = *ResolveSelection({}, m.shape);
  for (int round = 0; round < 2; ++round) {
    cudaMemset(out, 0xAB, values.size() * 4);
    const uint64_t before = GlobalEngineStats().chunks_gpu_decoded.load();
    DeviceSink sink(staging, out, 4, nullptr, kAlways);
    Status s = array->ReadToSink(all, sink, {.pool = &pool});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(GlobalEngineStats().chunks_gpu_decoded.load() - before, 2500u);
    EXPECT_EQ(testing::ToHost<int32_t>(out, values.size()), values);
  }
  const std::string key = "many/c/31/45";  // chunk 1595, not a multiple of 7
  Bytes stored;
  ASSERT_TRUE(*store->Get(key, &stored));
  stored[stored.size() / 2] ^= 0xFF;
  stored.resize(stored.size() - 9);
  ASSERT_TRUE(store->Set(key, stored).ok());
  DeviceSink sink(staging, out, 4, nullptr, kAlways);
  Status s = array->ReadToSink(all, sink, {.pool = &pool});
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_NE(s.message().find("array 'many' chunk '" + key + "'"), std::string::npos) << s.message();
  cudaFree(out);
}

}  // namespace
}  // namespace zarrd::cuda
