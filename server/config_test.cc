#include "server/config.h"

#include <gtest/gtest.h>

namespace zarrd::server {
namespace {

using nlohmann::json;

Result<ServerConfig> Parse(json extra) {
  json j = {{"stores", {{{"name", "m"}, {"kind", "memory"}}}}};
  j.update(extra);
  return ParseConfig(j, "/tmp");
}

TEST(ConfigGpuDecode, AutoByDefaultAndEachMode) {
  auto c = Parse(json::object());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->gpu_decode, GpuDecodeMode::kAuto);
  EXPECT_EQ(c->gpu_decode_min_chunks, kGpuDecodeMinChunks);
  EXPECT_FALSE(c->gpu_decode_prewarm);
  auto prewarm = Parse({{"gpu_decode_prewarm", true}});
  ASSERT_TRUE(prewarm.ok()) << prewarm.status().ToString();
  EXPECT_TRUE(prewarm->gpu_decode_prewarm);
  for (auto [name, mode] :
       {std::pair{"always", GpuDecodeMode::kAlways}, std::pair{"never", GpuDecodeMode::kNever},
        std::pair{"auto", GpuDecodeMode::kAuto}}) {
    auto parsed = Parse({{"gpu_decode", name}, {"gpu_decode_min_chunks", 64u}});
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->gpu_decode, mode);
    EXPECT_EQ(parsed->gpu_decode_min_chunks, 64u);
  }
}

TEST(ConfigGpuDecode, BadValuesAreRefused) {
  for (json bad : {json{{"gpu_decode", "gpu"}}, json{{"gpu_decode", true}},
                   json{{"gpu_decode_min_chunks", -1}}, json{{"gpu_decode_prewarm", "yes"}}}) {
    auto c = Parse(bad);
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << bad.dump();
    EXPECT_NE(c.status().message().find("gpu_decode"), std::string::npos) << c.status().message();
  }
}

TEST(ConfigArrays, GpuDecodeAndPrototypeOverridesAreEachOptional) {
  auto c = Parse({{"arrays",
                   {{{"store", "m"}, {"path", "a"}, {"gpu_decode", "never"}},
                    {{"store", "m"}, {"path", "b"}, {"prototype", "device"}}}}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const ArrayOverride* a = FindOverride(*c, "m", "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->gpu_decode, GpuDecodeMode::kNever);
  EXPECT_FALSE(a->prototype.has_value());
  const ArrayOverride* b = FindOverride(*c, "m", "b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->prototype, PrototypeKind::kDevice);
  EXPECT_FALSE(b->gpu_decode.has_value());
  EXPECT_EQ(FindOverride(*c, "m", "c"), nullptr);
  EXPECT_EQ(FindOverride(*c, "other", "a"), nullptr);
}

TEST(ConfigArrays, BadEntriesAreRefusedNamingTheField) {
  for (auto [bad, field] :
       {std::pair{json{{"store", "m"}, {"path", "a"}, {"gpu_decode", "gpu"}},
                  "arrays[].gpu_decode"},
        std::pair{json{{"store", "m"}, {"path", "a"}, {"gpu_decode", 1}}, "arrays[].gpu_decode"},
        std::pair{json{{"store", "m"}, {"path", "a"}, {"gpu-decode", "never"}},
                  "arrays[].gpu-decode"},
        std::pair{json{{"store", "m"}, {"path", 3}}, "arrays[]"}}) {
    auto c = Parse({{"arrays", {bad}}});
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << bad.dump();
    EXPECT_NE(c.status().message().find(field), std::string::npos) << c.status().message();
  }
}

}  // namespace
}  // namespace zarrd::server
