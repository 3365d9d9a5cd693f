#include "server/prepared_request.h"

#include <gtest/gtest.h>

#include "common/kvstore/store.h"
#include "common/metadata/metadata.h"

namespace zarrd::server {
namespace {

// A 100 x 60 float32 array in 10 x 20 chunks, in memory.
std::shared_ptr<Array> MakeArray() {
  auto m = ParseV3ArrayMetadata(nlohmann::json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [100, 60], "data_type": "float32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 20]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})"));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  auto array = Array::Create(StoreHandle(MakeMemoryStore()), "a", *m);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  return *array;
}

pb::GetItemRequest Request(std::initializer_list<std::array<int64_t, 3>> slices) {
  pb::GetItemRequest req;
  req.set_store("s");
  req.set_path("a");
  for (const auto& [start, stop, step] : slices) {
    auto* slice = req.mutable_selection()->add_items()->mutable_slice();
    slice->set_start(start);
    slice->set_stop(stop);
    slice->set_step(step);
  }
  return req;
}

TEST(PrepareRead, DescribesTheResultAsNumpyShapesIt) {
  // numpy: np.zeros((100, 60), "<f4")[5:95:3, -10:60:4].shape == (30, 3)
  auto read = PrepareRead(ServerConfig{}, Request({{5, 95, 3}, {-10, 60, 4}}), MakeArray());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(std::vector<int64_t>(read->descriptor.shape().begin(), read->descriptor.shape().end()),
            (std::vector<int64_t>{30, 3}));
  EXPECT_EQ(read->nbytes(), 30u * 3 * 4);
  EXPECT_EQ(read->descriptor.data_type(), "float32");
  EXPECT_EQ(read->descriptor.numpy_dtype(), "<f4");
  EXPECT_EQ(read->descriptor.prototype(), pb::PROTOTYPE_HOST);
  EXPECT_FALSE(read->advanced.has_value());
  std::vector<float> out(30 * 3, -1);
  ASSERT_TRUE(read->ReadInto(out.data(), read->nbytes(), {}).ok());
  EXPECT_EQ(out, std::vector<float>(30 * 3, 0.0f));  // the fill value: no chunk was written
}

TEST(PrepareRead, RefusesResultsOverMaxResultBytesNamingTheArray) {
  ServerConfig config;
  config.max_result_bytes = 100 * 60 * 4 - 1;
  auto read = PrepareRead(config, Request({}), MakeArray());
  ASSERT_EQ(read.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(read.status().message().find("array 'a'"), std::string::npos);
  EXPECT_NE(read.status().message().find("exceeds max_result_bytes"), std::string::npos);
  config.max_result_bytes = 100 * 60 * 4;
  EXPECT_TRUE(PrepareRead(config, Request({}), MakeArray()).ok());
}

TEST(PrepareRead, AdvancedSelectionsTakeEitherPrototype) {
  pb::GetItemRequest req = Request({});
  req.mutable_selection()->set_mode(pb::SELECTION_MODE_ORTHOGONAL);
  auto* rows = req.mutable_selection()->add_items()->mutable_indices();
  for (int64_t i : {7, 3, 3}) rows->add_values(i);
  req.mutable_selection()->add_items()->mutable_slice();
  auto read = PrepareRead(ServerConfig{}, req, MakeArray());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(read->advanced.has_value());
  // numpy: np.zeros((100, 60))[np.ix_([7, 3, 3], np.arange(60))].shape == (3, 60)
  EXPECT_EQ(read->nbytes(), 3u * 60 * 4);
  req.set_prototype(pb::PROTOTYPE_DEVICE);
  read = PrepareRead(ServerConfig{}, req, MakeArray());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->prototype, PrototypeKind::kDevice);
  EXPECT_EQ(read->nbytes(), 3u * 60 * 4);
}

TEST(ResolvePrototype, RequestThenOverrideThenRankThenDefault) {
  ServerConfig config;
  config.default_prototype = PrototypeKind::kDevice;
  config.overrides.push_back({.store = "s", .path = "a", .prototype = PrototypeKind::kHost});
  pb::GetItemRequest req = Request({});
  EXPECT_EQ(*ResolvePrototype(config, req, 2), PrototypeKind::kHost);  // the override
  req.set_path("b");
  EXPECT_EQ(*ResolvePrototype(config, req, 2), PrototypeKind::kDevice);  // the default
  EXPECT_EQ(*ResolvePrototype(config, req, 1), PrototypeKind::kHost);    // a coordinate
  req.set_prototype(pb::PROTOTYPE_DEVICE);
  EXPECT_EQ(*ResolvePrototype(config, req, 1), PrototypeKind::kDevice);
  req.mutable_host_region()->set_region_id("r");
  EXPECT_EQ(ResolvePrototype(config, req, 1).status().code(), StatusCode::kInvalidArgument);
}

TEST(PrepareRead, TakesTheArraysGpuDecodeOverrideAlone) {
  ServerConfig config;
  config.default_prototype = PrototypeKind::kDevice;
  config.overrides.push_back({.store = "s", .path = "a", .gpu_decode = GpuDecodeMode::kAlways});
  pb::GetItemRequest req = Request({});
  auto read = PrepareRead(config, req, MakeArray());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->gpu_decode, GpuDecodeMode::kAlways);
  EXPECT_EQ(read->prototype, PrototypeKind::kDevice);  // no prototype override: the default
  req.set_path("b");
  read = PrepareRead(config, req, MakeArray());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_FALSE(read->gpu_decode.has_value());
}

TEST(PrepareWrite, RefusesInputOverMaxRequestBytes) {
  ServerConfig config;
  config.max_request_bytes = 10 * 60 * 4;
  auto ten_rows = PrepareWrite(config, Request({{0, 10, 1}}).selection(), "a", MakeArray());
  ASSERT_TRUE(ten_rows.ok()) << ten_rows.status().ToString();
  EXPECT_EQ(ten_rows->nbytes, 10u * 60 * 4);
  auto eleven = PrepareWrite(config, Request({{0, 11, 1}}).selection(), "a", MakeArray());
  EXPECT_EQ(eleven.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(eleven.status().message().find("max_request_bytes"), std::string::npos);
}

TEST(PrepareWrite, WritesWhatAReadThenReturns) {
  auto array = MakeArray();
  pb::Selection rows = Request({{98, 100, 1}, {0, 60, 30}}).selection();
  auto write = PrepareWrite(ServerConfig{}, rows, "a", array);
  ASSERT_TRUE(write.ok()) << write.status().ToString();
  const std::vector<float> in = {1.5f, -2.0f, 3.25f, 4.0f};  // rows 98, 99 at columns 0, 30
  ASSERT_TRUE(write->WriteFrom(in.data(), in.size() * 4, {}).ok());
  auto read = PrepareRead(ServerConfig{}, Request({{97, 100, 1}, {0, 31, 30}}), array);
  ASSERT_TRUE(read.ok());
  std::vector<float> out(6);
  ASSERT_TRUE(read->ReadInto(out.data(), out.size() * 4, {}).ok());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 1.5f, -2.0f, 3.25f, 4.0f}));
}

// 100 strings of 1000 bytes in chunks of 10 (v3 vlen-utf8), element i of the letter 'a' + i % 26.
std::shared_ptr<Array> MakeStringArray() {
  auto m = ParseV3ArrayMetadata(nlohmann::json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [100], "data_type": "string",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": "",
    "codecs": [{"name": "vlen-utf8", "configuration": {}}]})"));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  auto array = Array::Create(StoreHandle(MakeMemoryStore()), "s", *m);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  std::string wire;  // per element a uint32 LE length, then the bytes
  for (int i = 0; i < 100; ++i) {
    wire += std::string("\xe8\x03\x00\x00", 4) + std::string(1000, static_cast<char>('a' + i % 26));
  }
  auto write = PrepareWrite(ServerConfig{}, Request({{0, 100, 1}}).selection(), "s", *array);
  EXPECT_TRUE(write.ok()) << write.status().ToString();
  EXPECT_TRUE(write->WriteFrom(wire.data(), wire.size(), {}).ok());
  return *array;
}

// One element of each chunk is 10 x 1004 wire bytes, but the read decodes 100 000 bytes of strings.
// (max_chunk_bytes bounds the chunks' 8-byte handles, not their strings.)
TEST(PrepareRead, StringReadsHoldWholeChunksStringsWithinMaxResultBytes) {
  auto array = MakeStringArray();
  auto refuse = [](uint64_t nbytes) { return ResourceExhausted(std::to_string(nbytes)); };
  ServerConfig config;
  auto read = PrepareRead(config, Request({{0, 100, 10}}), array);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto wire = read->ReadStrings({}, 1 << 20, refuse);
  ASSERT_TRUE(wire.ok()) << wire.status().ToString();
  ASSERT_EQ(wire->size(), 10u * 1004);
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(wire->substr(k * 1004, 4), std::string("\xe8\x03\x00\x00", 4));
    EXPECT_EQ(wire->substr(k * 1004 + 4, 1000), std::string(1000, 'a' + (10 * k) % 26)) << k;
  }
  // Past the limit the caller gives, its error, told the wire size.
  auto small = PrepareRead(config, Request({{0, 100, 10}}), array);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->ReadStrings({}, 10 * 1004 - 1, refuse).status().message(), "10040");
  // The chunks' strings in memory pass the budget (the result's limit and one chunk more) long
  // before the result passes its limit.
  config.max_result_bytes = 15000;
  config.max_chunk_bytes = 5000;
  auto bounded = PrepareRead(config, Request({{0, 100, 10}}), array);
  ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
  auto refused = bounded->ReadStrings({}, 20000, refuse);
  ASSERT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("max_result_bytes + max_chunk_bytes (20000 bytes)"),
            std::string::npos)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("array 's' chunk"), std::string::npos)
      << refused.status().ToString();
}

TEST(PrepareWrite, StringInputsOfManyTinyStringsStayWithinMaxRequestBytes) {
  auto array = MakeStringArray();
  ServerConfig config;
  config.max_request_bytes = 1000;  // 100 empty strings: 400 wire bytes, 3200+ in memory
  config.max_chunk_bytes = 1000;
  auto write = PrepareWrite(config, Request({{0, 100, 1}}).selection(), "s", array);
  ASSERT_TRUE(write.ok()) << write.status().ToString();
  const std::string empties(400, '\0');
  Status refused = write->WriteFrom(empties.data(), empties.size(), {});
  ASSERT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused.ToString();
  EXPECT_NE(refused.message().find("max_request_bytes + max_chunk_bytes (2000 bytes)"),
            std::string::npos)
      << refused.ToString();
}

}  // namespace
}  // namespace zarrd::server
