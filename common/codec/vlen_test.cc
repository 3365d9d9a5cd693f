// vlen-utf8 and vlen-bytes against numcodecs 0.11's VLenUTF8 and VLenBytes:
// tests/data/peers/numcodecs/vlen-*/ (made by make_string_vectors.py there).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/codec/codec.h"
#include "common/codec/registry.h"
#include "common/testing/test_util.h"

namespace zarrd {
namespace {

using nlohmann::json;
using testing::FixturesDir;
using testing::ReadFile;

std::filesystem::path VectorsDir(const std::string& id) {
  return std::filesystem::path(FixturesDir()) / "numcodecs" / id;
}

json ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<std::string> Items(const json& input, bool text) {
  std::vector<std::string> out;
  for (const json& item : input) {
    if (text) {
      out.push_back(item.get<std::string>());
    } else {
      std::string bytes;
      for (const json& b : item) bytes.push_back(static_cast<char>(b.get<int>()));
      out.push_back(bytes);
    }
  }
  return out;
}

class VLenVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(VLenVectors, EncodeAndDecodeAsNumcodecs) {
  const std::string id = GetParam();
  const bool text = id == "vlen-utf8";
  const DataType dtype = text ? DataType::kString : DataType::kBytes;
  int checked = 0;
  for (int n = 0;; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "input.%02d.json", n);
    if (!std::filesystem::exists(VectorsDir(id) / name)) break;
    SCOPED_TRACE(name);
    const auto items = Items(ReadJson(VectorsDir(id) / name), text);
    std::snprintf(name, sizeof name, "encoded.%02d.dat", n);
    Bytes want;
    ASSERT_TRUE(ReadFile((VectorsDir(id) / name).string(), &want));
    StringArena arena;
    ChunkSpec spec{dtype, {static_cast<int64_t>(items.size())}, StringFillValue(""), &arena};
    auto codec = MakeCodec<ArrayToBytesCodec>(id, json::object(), spec);
    ASSERT_TRUE(codec.ok()) << codec.status().ToString();
    Bytes handles(items.size() * kStringHandleSize);
    ASSERT_TRUE(arena.Adopt(items, handles.data()).ok());
    Bytes encoded;
    ASSERT_TRUE((*codec)->Encode(spec, handles.data(), &encoded).ok());
    EXPECT_EQ(encoded, want);
    Bytes decoded(handles.size());
    ASSERT_TRUE((*codec)->Decode(spec, want, decoded.data()).ok());
    for (size_t i = 0; i < items.size(); ++i) {
      EXPECT_EQ(LoadStringHandle(decoded.data() + i * kStringHandleSize), items[i]) << i;
    }
    ++checked;
  }
  EXPECT_GE(checked, 2);
}

INSTANTIATE_TEST_SUITE_P(Numcodecs, VLenVectors, ::testing::Values("vlen-utf8", "vlen-bytes"));

// Counts and lengths past the bytes present, or not matching the chunk, are DATA_LOSS; nothing
// is allocated for what the bytes cannot hold.
TEST(VLen, HostileChunksAreDataLoss) {
  StringArena arena;
  ChunkSpec spec{DataType::kString, {2}, StringFillValue(""), &arena};
  auto codec = MakeCodec<ArrayToBytesCodec>("vlen-utf8", json::object(), spec);
  ASSERT_TRUE(codec.ok());
  Bytes out(2 * kStringHandleSize);
  const Bytes cases[] = {
      {},                                                     // no count
      {2, 0, 0},                                              // short count
      {3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},                   // count is not the chunk's
      {2, 0, 0, 0, 1, 0, 0, 0, 'a'},                          // second item missing
      {2, 0, 0, 0, 1, 0, 0, 0, 'a', 0xff, 0xff, 0xff, 0xff},  // length past the end
      {2, 0, 0, 0, 1, 0, 0, 0, 0xff, 0, 0, 0, 0},             // not UTF-8
  };
  for (const Bytes& bad : cases) {
    Status s = (*codec)->Decode(spec, bad, out.data());
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  }
  ChunkSpec huge{DataType::kString, {int64_t{1} << 40}, StringFillValue(""), &arena};
  const Bytes count_only = {0, 0, 0, 0};
  EXPECT_EQ((*codec)->Decode(huge, count_only, out.data()).code(), StatusCode::kDataLoss);
}

TEST(VLen, DataTypesMustMatch) {
  ChunkSpec bytes{DataType::kBytes, {2}, StringFillValue("")};
  EXPECT_FALSE(MakeCodec<ArrayToBytesCodec>("vlen-utf8", json::object(), bytes).ok());
  ChunkSpec fixed{DataType::kString, {2}, StringFillValue(""), nullptr, 3};
  EXPECT_FALSE(MakeCodec<ArrayToBytesCodec>("vlen-utf8", json::object(), fixed).ok());
  ChunkSpec numbers{DataType::kInt32, {2}, FillValue(4, 0)};
  EXPECT_FALSE(MakeCodec<ArrayToBytesCodec>("vlen-bytes", json::object(), numbers).ok());
}

// numpy: np.array(["ab", "é"], "<U2").tobytes() and np.array([b"ab", b"c"], "|S2").tobytes().
TEST(FixedStrings, AsNumpyHoldsThem) {
  StringArena arena;
  ChunkSpec text{DataType::kString, {2}, StringFillValue(""), &arena, 2};
  auto u = MakeCodec<ArrayToBytesCodec>("bytes", json{{"endian", "little"}}, text);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  Bytes handles(2 * kStringHandleSize);
  ASSERT_TRUE(arena.Adopt({"ab", "\xc3\xa9"}, handles.data()).ok());
  Bytes encoded;
  ASSERT_TRUE((*u)->Encode(text, handles.data(), &encoded).ok());
  EXPECT_EQ(encoded, (Bytes{'a', 0, 0, 0, 'b', 0, 0, 0, 0xe9, 0, 0, 0, 0, 0, 0, 0}));
  Bytes decoded(handles.size());
  ASSERT_TRUE((*u)->Decode(text, encoded, decoded.data()).ok());
  EXPECT_EQ(LoadStringHandle(decoded.data() + 8), "\xc3\xa9");

  ChunkSpec bytes{DataType::kBytes, {2}, StringFillValue(""), &arena, 2};
  auto s = MakeCodec<ArrayToBytesCodec>("bytes", json{{"endian", "little"}}, bytes);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(arena.Adopt({"ab", "c"}, handles.data()).ok());
  ASSERT_TRUE((*s)->Encode(bytes, handles.data(), &encoded).ok());
  EXPECT_EQ(encoded, (Bytes{'a', 'b', 'c', 0}));
  ASSERT_TRUE((*s)->Decode(bytes, encoded, decoded.data()).ok());
  EXPECT_EQ(LoadStringHandle(decoded.data() + 8), "c");
  EXPECT_EQ((*s)->Decode(bytes, Bytes{'a'}, decoded.data()).code(), StatusCode::kDataLoss);
  ChunkSpec vlen{DataType::kString, {2}, StringFillValue("")};
  EXPECT_FALSE(MakeCodec<ArrayToBytesCodec>("bytes", json::object(), vlen).ok());
}

}  // namespace
}  // namespace zarrd
