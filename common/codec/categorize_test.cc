// categorize against numcodecs 0.11's Categorize: tests/data/peers/numcodecs/categorize/ (made
// by make_string_vectors.py there).
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

json ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

TEST(Categorize, EncodeAndDecodeAsNumcodecs) {
  const auto dir = std::filesystem::path(FixturesDir()) / "numcodecs" / "categorize";
  int checked = 0;
  for (int m = 0; std::filesystem::exists(dir / ("codec.0" + std::to_string(m))); ++m) {
    const auto codec_dir = dir / ("codec.0" + std::to_string(m));
    const json config = ReadJson(codec_dir / "config.json");
    for (int n = 0; n < 10; ++n) {
      const std::string nn = "0" + std::to_string(n);
      if (!std::filesystem::exists(codec_dir / ("encoded." + nn + ".dat"))) continue;
      SCOPED_TRACE(config.dump() + " input " + nn);
      const json input = ReadJson(dir / ("input." + nn + ".json"));
      const json want_decoded = ReadJson(codec_dir / ("decoded." + nn + ".json"));
      Bytes want;
      ASSERT_TRUE(ReadFile((codec_dir / ("encoded." + nn + ".dat")).string(), &want));
      StringArena arena;
      ChunkSpec spec{
          DataType::kString, {static_cast<int64_t>(input.size())}, StringFillValue(""), &arena};
      auto made = CodecRegistry::Builtin().MakeV2Filter(config, spec);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      auto& codec = std::get<std::unique_ptr<ArrayToArrayCodec>>(*made);
      std::vector<std::string> items;
      for (const json& s : input) items.push_back(s.get<std::string>());
      Bytes handles(items.size() * kStringHandleSize);
      ASSERT_TRUE(arena.Adopt(items, handles.data()).ok());
      const ChunkSpec encoded_spec = codec->EncodedSpec(spec);
      Bytes encoded(encoded_spec.num_bytes());
      codec->Encode(spec, handles.data(), encoded.data());
      EXPECT_EQ(encoded, want);
      Bytes decoded(handles.size());
      codec->Decode(spec, want.data(), decoded.data());
      for (size_t i = 0; i < items.size(); ++i) {
        EXPECT_EQ(LoadStringHandle(decoded.data() + i * kStringHandleSize),
                  want_decoded[i].get<std::string>())
            << i;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 7);
}

TEST(Categorize, RefusesWhatItCannotDecode) {
  const ChunkSpec strings{DataType::kString, {2}, StringFillValue("")};
  const ChunkSpec floats{DataType::kFloat32, {2}, FillValue(4, 0)};
  auto make = [](const char* config, const ChunkSpec& spec) {
    return CodecRegistry::Builtin().MakeV2Filter(json::parse(config), spec).status();
  };
  EXPECT_TRUE(
      make(R"({"id":"categorize","labels":["a"],"dtype":"<U1","astype":"|u1"})", strings).ok());
  EXPECT_FALSE(make(R"({"id":"categorize","labels":["a"],"dtype":"<U1"})", floats).ok());
  EXPECT_FALSE(make(R"({"id":"categorize","labels":[1],"dtype":"|O"})", strings).ok());
  EXPECT_FALSE(make(R"({"id":"categorize","labels":["a"],"dtype":"<f4"})", strings).ok());
  EXPECT_FALSE(
      make(R"({"id":"categorize","labels":["a"],"dtype":"|O","astype":"<f4"})", strings).ok());
}

}  // namespace
}  // namespace zarrd
