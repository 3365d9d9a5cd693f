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

TEST(ConfigStores, FieldsOfTheWrongTypeAreRefusedNamingTheField) {
  const json local = {{"name", "l"}, {"root", "data"}};
  for (auto [extra, field] :
       {std::pair{json{{"read_only", "yes"}}, "stores[l].read_only"},
        std::pair{json{{"fsync", 1}}, "stores[l].fsync"},
        std::pair{json{{"kind", 3}}, "stores[l].kind"},
        std::pair{json{{"kind", "gpu"}, {"device", true}}, "stores[l].device"},
        std::pair{json{{"kind", "s3"}, {"bucket", "b"}, {"anonymous", "x"}}, "stores[l].anonymous"},
        std::pair{json{{"kind", "gpu"}, {"capacity_bytes", -1}}, "stores[l].capacity_bytes"},
        std::pair{json{{"kind", "s3"}, {"bucket", "b"}, {"http", {{"max_attempts", "3"}}}},
                  "stores[l].http.max_attempts"}}) {
    json store = local;
    store.update(extra);
    auto c = ParseConfig(json{{"stores", {store}}}, "/tmp");
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << extra.dump();
    EXPECT_NE(c.status().message().find(field), std::string::npos) << c.status().message();
  }
  for (auto [extra, field] : {std::pair{json{{"log_level", 5}}, "log_level"},
                              std::pair{json{{"socket_mode", "zz"}}, "socket_mode"},
                              std::pair{json{{"socket_mode", "99999"}}, "socket_mode"},
                              std::pair{json{{"socket_mode", 4096}}, "socket_mode"},
                              std::pair{json{{"stream_piece_bytes", (uint64_t{1} << 32) + 8192}},
                                        "stream_piece_bytes is too large"}}) {
    auto c = Parse(extra);
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << extra.dump();
    EXPECT_NE(c.status().message().find(field), std::string::npos) << c.status().message();
  }
  auto c = Parse({{"socket_mode", "0640"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->socket_mode, 0640u);
}

// What SIGHUP's reload parses may hold anything: every setting, at the top and in a store, given a
// value of every JSON type, is refused or taken, and never throws.
TEST(ConfigStores, AnyValueOfAnySettingIsRefusedOrTakenNeverThrown) {
  const json values[] = {json(nullptr), json(true), json(-1),         json(1u << 31),
                         json(0.5),     json("zz"), json::array({1}), json::object({{"a", 1}})};
  const char* top[] = {"stores",
                       "listen",
                       "socket_mode",
                       "worker_threads",
                       "max_request_bytes",
                       "default_prototype",
                       "arrays",
                       "shutdown_grace_seconds",
                       "log_level",
                       "devices",
                       "gpu_decode",
                       "gpu_decode_prewarm",
                       "lease_ttl_seconds",
                       "metrics_listen",
                       "enable_stream_bytes",
                       "socket_group",
                       "tls"};
  const char* in_store[] = {"name",           "kind",   "root",     "read_only", "fsync", "device",
                            "capacity_bytes", "bucket", "endpoint", "anonymous", "http",  "url"};
  int refused = 0;
  for (const json& v : values) {
    for (const char* key : top) {
      json j = {{"stores", {{{"name", "m"}, {"kind", "memory"}}}}};
      j[key] = v;
      EXPECT_NO_THROW(refused += !ParseConfig(j, "/tmp").ok()) << key << " " << v.dump();
    }
    for (const char* kind : {"local", "memory", "gpu", "s3", "http"}) {
      for (const char* key : in_store) {
        json store = {
            {"name", "s"}, {"kind", kind}, {"root", "r"}, {"bucket", "b"}, {"url", "http://h"}};
        store[key] = v;
        EXPECT_NO_THROW(refused += !ParseConfig(json{{"stores", {store}}}, "/tmp").ok())
            << kind << " " << key << " " << v.dump();
      }
    }
  }
  EXPECT_GT(refused, 300);
}

}  // namespace
}  // namespace zarrd::server
