#include "common/cuda/device_sink.h"

#include <gtest/gtest.h>

#include <cctype>

#include "common/array/array.h"
#include "common/cuda/cuda_test_util.h"
#include "common/cuda/store_gpu.h"
#include "common/metadata/json_document.h"
#include "common/testing/test_util.h"

namespace zarrd::cuda {
namespace {

using nlohmann::json;
using zarrd::testing::Pattern;
using zarrd::testing::Reference;

ArrayMetadata Meta(const std::string& kind) {
  ArrayMetadata m;
  m.format = ZarrFormat::kV3;
  m.shape = {13, 11, 9};  // 80 chunks: a full read launches a full batch and a partial one
  m.chunk_shape = {4, 3, 2};
  m.dtype = DataType::kInt32;
  m.fill_value = FillValue(4, 0);
  m.codecs = json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])");
  if (kind == "zstd") {
    m.codecs.push_back(json::parse(R"({"name":"zstd","configuration":{"level":1}})"));
  } else if (kind == "transpose-gzip") {
    m.codecs = json::parse(R"([{"name":"transpose","configuration":{"order":[2,0,1]}},
                               {"name":"bytes","configuration":{"endian":"big"}},
                               {"name":"gzip","configuration":{"level":1}}])");
  } else if (kind == "sharded") {
    m.chunk_shape = {8, 6, 5};
    m.codecs = json::parse(R"([{"name":"sharding_indexed","configuration":{
      "chunk_shape":[4,3,5],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},
      {"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4}}],
      "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}}])");
  } else if (kind == "v2-F") {
    m.format = ZarrFormat::kV2;
    m.v2_order = 'F';
    m.v2_endian = Endian::kBig;
    m.v2_compressor = json::parse(R"({"id":"zlib","level":1})");
    m.codecs = json();
  }
  return m;
}

// (store kind, codec kind): every pipeline through the staging path, and the GPU store both
// raw (device-to-device) and compressed (through the host).
class DeviceRead : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(DeviceRead, SelectionsMatchTheReference) {
  ZARRD_REQUIRE_GPU();
  const auto [store_kind, codec_kind] = GetParam();
  StoreHandle store(MakeMemoryStore());
  if (std::string(store_kind) == "gpu") {
    auto gpu = MakeGpuStore(
        {.name = "t", .device = 0, .capacity_bytes = 64 << 20, .on_host = IsMetadataDocumentKey});
    ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
    store = StoreHandle(*gpu);
  }
  auto array = Array::Create(store, "g/a", Meta(codec_kind));
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  const auto shape = (*array)->metadata()->shape;
  auto values = Pattern(13 * 11 * 9);
  // Leave one chunk absent (fill value) by writing all but the last rows.
  for (int64_t i = 0; i < 13 * 11 * 9; ++i)
    if (i >= 12 * 11 * 9) values[i] = 0;
  ASSERT_TRUE((*array)->Write({}, values.data(), values.size() * 4).ok());
  StagingPool staging(0, 8);
  for (const char* text : {"", "3", "-1, ::-1", "2:11:3, 1:, ::2", "::-4, 10:0:-3, 1",
                           "12:1:-5, ..., -2", "5:5", ":, 7, :", "0, 0, 0"}) {
    SCOPED_TRACE(text);
    auto resolved = ResolveSelection(*ParseSelection(text), shape);
    ASSERT_TRUE(resolved.ok());
    auto expected = Reference(values, shape, *resolved);
    const size_t nbytes = std::max<size_t>(4, expected.size() * 4);
    uint8_t* out;
    ASSERT_EQ(cudaMalloc(&out, nbytes), cudaSuccess);
    cudaMemset(out, 0xAB, nbytes);
    DeviceSink sink(staging, out, 4);
    Status s = (*array)->ReadToSink(*resolved, sink);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(testing::ToHost<int32_t>(out, expected.size()), expected);
    // Finishing on a stream: the result is complete once the stream is; the chunks of a GPU
    // store that the copies read are held.
    cudaMemset(out, 0xAB, nbytes);
    cudaStream_t join;
    ASSERT_EQ(cudaStreamCreateWithFlags(&join, cudaStreamNonBlocking), cudaSuccess);
    DeviceSink joined(staging, out, 4, join);
    s = (*array)->ReadToSink(*resolved, joined);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const auto held = joined.TakeHeld();
    ASSERT_EQ(cudaStreamSynchronize(join), cudaSuccess);
    EXPECT_EQ(testing::ToHost<int32_t>(out, expected.size()), expected);
    // Only chunks copied from GPU memory are held (the whole array touches stored ones).
    if (std::string(store_kind) != "gpu" || std::string(codec_kind) != "raw") {
      EXPECT_TRUE(held.empty());
    } else if (std::string(text).empty()) {
      EXPECT_FALSE(held.empty());
    }
    cudaStreamDestroy(join);
    cudaFree(out);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, DeviceRead,
                         ::testing::Values(std::pair{"memory", "raw"}, std::pair{"memory", "zstd"},
                                           std::pair{"memory", "transpose-gzip"},
                                           std::pair{"memory", "sharded"},
                                           std::pair{"memory", "v2-F"}, std::pair{"gpu", "raw"},
                                           std::pair{"gpu", "zstd"}),
                         [](const auto& info) {
                           std::string name =
                               std::string(info.param.first) + "_" + info.param.second;
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// Chunks go up in groups of up to 4 MiB per thread: 1 MiB chunks four at a time, 4 MiB chunks
// alone, and a thread's last, partial group when it leaves the read.
TEST(DeviceSinkGroups, ChunksOfOneAndFourMiBInFullAndPartialGroups) {
  ZARRD_REQUIRE_GPU();
  StagingPool staging(0, 8);
  ThreadPool pool(3);
  for (int64_t chunk : {512, 1024}) {
    SCOPED_TRACE(chunk);
    auto m = Meta("raw");
    m.shape = {2048 + 100, 1536};
    m.chunk_shape = {chunk, chunk};
    auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "a", m);
    const auto values = Pattern(m.shape[0] * m.shape[1]);
    ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
    for (const char* text : {"", "::3, 7:1500:2", "100:101, :", "2047:2049, 1535"}) {
      SCOPED_TRACE(text);
      auto resolved = *ResolveSelection(*ParseSelection(text), m.shape);
      auto expected = Reference(values, m.shape, resolved);
      uint8_t* out;
      ASSERT_EQ(cudaMalloc(&out, expected.size() * 4), cudaSuccess);
      DeviceSink sink(staging, out, 4);
      Status s = array->ReadToSink(resolved, sink, {.pool = &pool});
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(testing::ToHost<int32_t>(out, expected.size()), expected);
      cudaFree(out);
    }
  }
}

TEST(DeviceSinkValues, OnlyValuesOfItsOwnDeviceAreReadInPlace) {
  ZARRD_REQUIRE_GPU();
  StagingPool staging(0, 2);
  uint8_t* out;
  ASSERT_EQ(cudaMalloc(&out, 16), cudaSuccess);
  DeviceSink sink(staging, out, 4);
  EXPECT_TRUE(sink.accepts_device_values(0));
  EXPECT_FALSE(sink.accepts_device_values(1));  // another GPU's memory comes through the host
  cudaFree(out);
}

TEST(GpuStore, MetadataOnTheHostChunksOnTheDeviceAndACap) {
  ZARRD_REQUIRE_GPU();
  StoreHandle store(*MakeGpuStore(
      {.name = "cap", .device = 0, .capacity_bytes = 1 << 20, .on_host = IsMetadataDocumentKey}));
  DeviceResidentStore* device = AsDeviceResident(*store);
  ASSERT_NE(device, nullptr);
  auto m = Meta("raw");
  m.shape = {1024, 1024};
  m.chunk_shape = {256, 256};  // 256 KiB chunks: four fit
  auto array = *Array::Create(store, "big", m);
  auto meta_value = device->GetDevice("big/zarr.json");
  EXPECT_EQ(meta_value.status().code(), StatusCode::kFailedPrecondition);
  std::vector<int32_t> ones(256 * 256, 1);
  for (int c = 0; c < 4; ++c) {
    auto sel =
        *ParseSelection("0:256, " + std::to_string(c * 256) + ":" + std::to_string(c * 256 + 256));
    ASSERT_TRUE(array->Write(sel, ones.data(), ones.size() * 4).ok());
  }
  auto sel = *ParseSelection("256:512, 0:256");
  Status full = array->Write(sel, ones.data(), ones.size() * 4);
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("GPU store is full"), std::string::npos) << full.message();
  EXPECT_NE(full.message().find("c/1/0"), std::string::npos) << full.message();
  ASSERT_TRUE(store->Delete("big/c/0/0").ok());
  EXPECT_TRUE(array->Write(sel, ones.data(), ones.size() * 4).ok());
}

}  // namespace
}  // namespace zarrd::cuda
