#include "common/metadata/metadata.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "common/testing/test_util.h"

namespace zarrd {
namespace {

using nlohmann::json;

json V3Array() {
  return json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [10, 7], "data_type": "float32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 3]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": "NaN",
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "zstd", "configuration": {"level": 3, "checksum": false}}],
    "attributes": {"units": "m"}, "dimension_names": ["y", null]})");
}

// float32 [2^31, 2^31] and [2^62] are 2^64 bytes: the size wrapped to 0 and the array was
// created; a whole-array read then asked for 8.8 TB or grew until the OOM killer came.
TEST(MetadataV3, ArraysWhoseByteSizeOverflowsAreRefused) {
  for (const json& shape : {json{int64_t{1} << 31, int64_t{1} << 31}, json{int64_t{1} << 62},
                            json{int64_t{1} << 61}, json{int64_t{1} << 62, int64_t{1} << 62}}) {
    json j = V3Array();
    j["shape"] = shape;
    j["chunk_grid"]["configuration"]["chunk_shape"] = json::array();
    for (size_t d = 0; d < shape.size(); ++d)
      j["chunk_grid"]["configuration"]["chunk_shape"].push_back(1);
    j.erase("dimension_names");
    auto m = ParseV3ArrayMetadata(j);
    ASSERT_FALSE(m.ok()) << shape.dump();
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(m.status().message().find("overflows"), std::string::npos) << m.status().ToString();
  }
  // 2^62 one-byte elements fit: a sparse array of that size is fine, reads of it are bounded.
  json j = V3Array();
  j["shape"] = {int64_t{1} << 62};
  j["data_type"] = "uint8";
  j["fill_value"] = 0u;
  j["chunk_grid"]["configuration"]["chunk_shape"] = {1};
  j.erase("dimension_names");
  auto m = ParseV3ArrayMetadata(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->grid_shape(), (std::vector<int64_t>{int64_t{1} << 62}));
  j["shape"] = {std::numeric_limits<int64_t>::max()};
  j["chunk_grid"]["configuration"]["chunk_shape"] = {1000};
  m = ParseV3ArrayMetadata(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();  // shape + chunk - 1 overflowed in grid_shape
  EXPECT_EQ(m->grid_shape()[0], std::numeric_limits<int64_t>::max() / 1000 + 1);
}

TEST(MetadataV3, ParsesAndRoundTrips) {
  auto m = ParseV3ArrayMetadata(V3Array());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->shape, (std::vector<int64_t>{10, 7}));
  EXPECT_EQ(m->grid_shape(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(m->ChunkKey({2, 1}), "c/2/1");
  EXPECT_EQ((*m->dimension_names)[0], "y");
  EXPECT_FALSE((*m->dimension_names)[1].has_value());
  json out = ToV3Json(*m);
  EXPECT_EQ(out["fill_value"], "NaN");
  EXPECT_EQ(out["dimension_names"], json::parse(R"(["y", null])"));
  auto again = ParseV3ArrayMetadata(out);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ToV3Json(*again), out);
}

// Found by fuzz_metadata_v3: numcodecs codecs were written back under their numcodecs ids.
TEST(MetadataV3, NumcodecsCodecsWriteBackUnderTheirV3Names) {
  for (const char* name : {"numcodecs.zlib", "numcodecs.bz2"}) {
    json doc = V3Array();
    doc["codecs"][1] = {{"name", name}, {"configuration", {{"level", 5}}}};
    auto m = ParseV3ArrayMetadata(doc);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const json written = ToV3Json(*m);
    EXPECT_EQ(written["codecs"][1]["name"], name);
    EXPECT_TRUE(ParseV3ArrayMetadata(written).ok());
  }
}

TEST(MetadataV3, ChunkKeysParseBack) {
  for (const char* encoding :
       {R"({"name": "default"})", R"({"name": "default", "configuration": {"separator": "."}})",
        R"({"name": "v2"})", R"({"name": "v2", "configuration": {"separator": "/"}})"}) {
    json doc = V3Array();
    doc["chunk_key_encoding"] = json::parse(encoding);
    auto m = ParseV3ArrayMetadata(doc);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const std::vector<int64_t> index = {2, 0};
    EXPECT_EQ(m->ParseChunkKey(m->ChunkKey(index)), index) << encoding;
    EXPECT_EQ(m->ParseChunkKey("zarr.json"), std::nullopt);
    EXPECT_EQ(m->ParseChunkKey(m->ChunkKey(index) + "x"), std::nullopt);
    EXPECT_EQ(m->ParseChunkKey(m->ChunkKey({2})), std::nullopt);
  }
}

TEST(MetadataV3, KeyEncodings) {
  json j = V3Array();
  j["chunk_key_encoding"] = json::parse(R"({"name": "v2", "configuration": {"separator": "."}})");
  EXPECT_EQ(ParseV3ArrayMetadata(j)->ChunkKey({2, 1}), "2.1");
  j["chunk_key_encoding"] = json::parse(R"({"name": "v2", "configuration": {"separator": "/"}})");
  EXPECT_EQ(ParseV3ArrayMetadata(j)->ChunkKey({2, 1}), "2/1");
  j["chunk_key_encoding"] =
      json::parse(R"({"name": "default", "configuration": {"separator": "."}})");
  EXPECT_EQ(ParseV3ArrayMetadata(j)->ChunkKey({2, 1}), "c.2.1");
  j["chunk_key_encoding"] = json::parse(R"({"name": "default"})");
  EXPECT_EQ(ParseV3ArrayMetadata(j)->ChunkKey({0, 0}), "c/0/0");
}

TEST(MetadataV3, ExtensionsAndErrorsNameTheField) {
  json j = V3Array();
  j["my_extension"] = {{"must_understand", false}, {"x", 1}};
  EXPECT_TRUE(ParseV3ArrayMetadata(j).ok());
  j["my_extension"] = {{"must_understand", true}};
  auto ext = ParseV3ArrayMetadata(j);
  EXPECT_EQ(ext.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ext.status().message().find("my_extension"), std::string::npos);

  auto expect_field = [](json doc, const std::string& field) {
    auto r = ParseV3ArrayMetadata(doc);
    ASSERT_FALSE(r.ok()) << doc.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
  };
  json bad = V3Array();
  bad["shape"] = {10, -1};
  expect_field(bad, "shape");
  bad = V3Array();
  bad["data_type"] = "int128";
  expect_field(bad, "data_type");
  bad = V3Array();
  bad["data_type"] = "string";  // with the bytes codec, not vlen-utf8
  expect_field(bad, "vlen-utf8");
  bad = V3Array();
  bad["chunk_grid"]["name"] = "rectilinear";
  expect_field(bad, "chunk_grid");
  bad = V3Array();
  bad.erase("fill_value");
  expect_field(bad, "fill_value");
  bad = V3Array();
  bad["fill_value"] = "nan";
  expect_field(bad, "fill_value");
  bad = V3Array();
  bad["chunk_grid"]["configuration"]["chunk_shape"] = {1 << 30, 1 << 30};
  expect_field(bad, "chunk shape");
  bad = V3Array();
  bad["dimension_names"] = {"y"};
  expect_field(bad, "dimension_names");
  bad = V3Array();
  bad["storage_transformers"] = json::array({{{"name", "x"}}});
  expect_field(bad, "storage_transformers");
  bad = V3Array();
  bad["zarr_format"] = 2;
  expect_field(bad, "zarr_format");
}

TEST(MetadataV3, Groups) {
  auto g = ParseV3GroupMetadata(
      json::parse(R"({"zarr_format": 3, "node_type": "group", "attributes": {"a": [1, 2]}})"));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->attributes["a"][1], 2);
  EXPECT_EQ(ToV3Json(*g)["node_type"], "group");
  EXPECT_FALSE(ParseV3GroupMetadata(V3Array()).ok());
}

TEST(MetadataV2, ParsesOrderEndiannessAndCompressor) {
  json z = json::parse(R"({"zarr_format": 2, "shape": [5, 4], "chunks": [2, 2], "dtype": ">i4",
    "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "fill_value": 7, "order": "F", "filters": null, "dimension_separator": "/"})");
  auto m = ParseV2ArrayMetadata(z, json::parse(R"({"title": "t"})"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->dtype, DataType::kInt32);
  EXPECT_EQ(m->v2_endian, Endian::kBig);
  EXPECT_EQ(m->ChunkKey({1, 0}), "1/0");
  EXPECT_EQ(m->attributes["title"], "t");
  // Equivalent v3 pipeline: transpose (F), bytes big-endian, blosc.
  EXPECT_EQ(m->codecs[0]["name"], "transpose");
  EXPECT_EQ(m->codecs[1]["configuration"]["endian"], "big");
  EXPECT_EQ(m->codecs[2]["name"], "blosc");
  json out = ToV2Json(*m);
  EXPECT_EQ(out["dtype"], ">i4");
  EXPECT_EQ(out["order"], "F");
  EXPECT_EQ(out["fill_value"], 7);
  EXPECT_EQ(out["compressor"], z["compressor"]);
  EXPECT_TRUE(ParseV2ArrayMetadata(out, nullptr).ok());
}

TEST(MetadataV3, DatetimeDataTypesAsZarrPython3WritesThem) {
  json j = V3Array();
  j["data_type"] = json::parse(
      R"({"name": "numpy.timedelta64", "configuration": {"unit": "ms", "scale_factor": 10}})");
  j["fill_value"] = -9223372036854775807LL - 1;
  auto m = ParseV3ArrayMetadata(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->dtype, DataType::kTimedelta64);
  EXPECT_EQ(m->time_unit, (TimeUnit{"ms", 10}));
  EXPECT_EQ(m->result_typestr(), "<m8[10ms]");
  json out = ToV3Json(*m);
  EXPECT_EQ(out["data_type"], j["data_type"]);
  EXPECT_EQ(out["fill_value"], j["fill_value"]);
  j["fill_value"] = "NaT";
  EXPECT_TRUE(ParseV3ArrayMetadata(j).ok());
  j["data_type"] = json::parse(R"({"name": "numpy.datetime64", "configuration": {"unit": "q"}})");
  auto bad = ParseV3ArrayMetadata(j);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("\"q\""), std::string::npos) << bad.status().ToString();
  j["data_type"] = "numpy.datetime64";  // the unit is required
  EXPECT_EQ(ParseV3ArrayMetadata(j).status().code(), StatusCode::kInvalidArgument);
}

TEST(MetadataV2, DatetimeTypestrsRoundTrip) {
  json z = json::parse(R"({"zarr_format": 2, "shape": [5], "chunks": [2], "dtype": ">M8[s]",
    "compressor": null, "fill_value": -9223372036854775808, "order": "C", "filters": null})");
  auto m = ParseV2ArrayMetadata(z, nullptr);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->dtype, DataType::kDatetime64);
  EXPECT_EQ(m->result_typestr(), "<M8[s]");
  EXPECT_EQ(m->codecs[0]["configuration"]["endian"], "big");
  EXPECT_EQ(ToV2Json(*m)["dtype"], ">M8[s]");
  EXPECT_EQ(ToV2Json(*m)["fill_value"], z["fill_value"]);
}

TEST(MetadataV2, FillValuesAndErrors) {
  json z = json::parse(R"({"zarr_format": 2, "shape": [5], "chunks": [2], "dtype": "<f8",
    "compressor": null, "fill_value": "NaN", "order": "C", "filters": null})");
  auto m = ParseV2ArrayMetadata(z, nullptr);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(ToV2Json(*m)["fill_value"], "NaN");
  EXPECT_EQ(m->ChunkKey({3}), "3");
  z["fill_value"] = nullptr;
  EXPECT_EQ(ParseV2ArrayMetadata(z, nullptr)->fill_value, FillValue(8, 0));
  EXPECT_TRUE(ToV2Json(*ParseV2ArrayMetadata(z, nullptr))["fill_value"].is_null());
  json f = z;
  f["filters"] = json::parse(R"([{"id": "delta", "dtype": "<f8"}])");
  EXPECT_TRUE(ParseV2ArrayMetadata(f, nullptr).ok());
  f["filters"] = json::parse(R"([{"id": "delta", "dtype": ">f8"}])");  // not the array's order
  EXPECT_NE(ParseV2ArrayMetadata(f, nullptr).status().message().find("byte order"),
            std::string::npos);
  // categorize turns strings into integers: on a float array it is refused.
  f["filters"] = json::parse(R"([{"id": "categorize", "labels": ["a"], "dtype": "<U1"}])");
  EXPECT_NE(ParseV2ArrayMetadata(f, nullptr).status().message().find("categorize"),
            std::string::npos);
  // Filters that are not objects with a string id (found by fuzz_metadata_v2): refused, named.
  for (const char* odd : {R"("delta")", R"([7, {"id": 3}])", R"({"id": "x"})"}) {
    f["filters"] = json::parse(odd);
    auto refused = ParseV2ArrayMetadata(f, nullptr);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << odd;
    EXPECT_NE(refused.status().message().find("filters"), std::string::npos) << odd;
  }
  json c = z;
  c["compressor"] = json::parse(R"({"id": "lzma"})");
  EXPECT_NE(ParseV2ArrayMetadata(c, nullptr).status().message().find("lzma"), std::string::npos);
  json d = z;
  d["dtype"] = "|U7";
  EXPECT_NE(ParseV2ArrayMetadata(d, nullptr).status().message().find("dtype"), std::string::npos);
  // Strings as zarr 2.13 writes them: "|O" with its object codec first in filters (fill 0).
  json s = z;
  s["dtype"] = "|O";
  s["fill_value"] = 0;
  s["compressor"] = json::parse(R"({"id": "zstd", "level": 1})");
  s["filters"] = json::parse(R"([{"id": "vlen-bytes"}])");
  auto vlen = ParseV2ArrayMetadata(s, nullptr);
  ASSERT_TRUE(vlen.ok()) << vlen.status().ToString();
  EXPECT_EQ(vlen->dtype, DataType::kBytes);
  EXPECT_EQ(vlen->result_typestr(), "|O");
  EXPECT_EQ(ToV2Json(*vlen)["dtype"], "|O");
  s["filters"] = nullptr;  // no object codec: zarr 2 would pickle or refuse
  EXPECT_NE(ParseV2ArrayMetadata(s, nullptr).status().message().find("vlen-utf8"),
            std::string::npos);
  s["filters"] = json::parse(R"([{"id": "zstd"}, {"id": "vlen-utf8"}])");
  EXPECT_EQ(ParseV2ArrayMetadata(s, nullptr).status().code(), StatusCode::kInvalidArgument);
  s["dtype"] = "<U3";
  s["fill_value"] = "ab";
  s["filters"] = json::parse(R"([{"id": "categorize", "labels": ["ab"], "dtype": "<U3",
                                  "astype": "|u1"}])");
  auto categorized = ParseV2ArrayMetadata(s, nullptr);
  ASSERT_TRUE(categorized.ok()) << categorized.status().ToString();
  EXPECT_EQ(categorized->string_width, 3u);
  EXPECT_EQ(ToV2Json(*categorized)["dtype"], "<U3");
  EXPECT_EQ(ToV2Json(*categorized)["fill_value"], "ab");
  json o = z;
  o["order"] = "K";
  EXPECT_NE(ParseV2ArrayMetadata(o, nullptr).status().message().find("order"), std::string::npos);
}

// Every zarr.json and .zarray in the peer fixtures parses, or fails with a named reason.
TEST(Metadata, EveryFixtureDocumentParsesOrExplains) {
  int parsed = 0, refused = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(testing::FixturesDir())) {
    const std::string name = entry.path().filename().string();
    if (name != "zarr.json" && name != ".zarray") continue;
    std::ifstream f(entry.path());
    json j = json::parse(f);
    Status s;
    if (name == ".zarray") {
      s = ParseV2ArrayMetadata(j, nullptr).status();
    } else if (j.value("node_type", "") == "group") {
      s = ParseV3GroupMetadata(j).status();
    } else {
      s = ParseV3ArrayMetadata(j).status();
    }
    if (s.ok()) {
      ++parsed;
    } else {
      ++refused;
      std::cout << "  refused " << entry.path().string().substr(testing::FixturesDir().size())
                << ": " << s.ToString() << "\n";
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << entry.path();
      EXPECT_FALSE(s.message().empty());
    }
  }
  std::cout << "fixture metadata: " << parsed << " parsed, " << refused << " refused\n";
  EXPECT_GE(parsed, 95);
}

}  // namespace
}  // namespace zarrd
