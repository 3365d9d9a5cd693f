// The HTTP store against Python's http.server (which ignores Range: whole answers are cut here)
// and against s3rver's anonymous GETs (which answer ranges with 206).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/kvstore/object_store.h"
#include "common/testing/s3_test_server.h"

namespace zarrd {
namespace {

Bytes B(const std::string& s) { return Bytes(s.begin(), s.end()); }

void CheckReads(Store& store) {
  Bytes out;
  auto got = store.Get("a/b/c", &out);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(*got);
  EXPECT_EQ(out, B("hello world"));
  EXPECT_FALSE(*store.Get("a/missing", &out));
  ASSERT_TRUE(*store.GetRange("a/b/c", ByteRange::Prefix(6, 5), &out));
  EXPECT_EQ(out, B("world"));
  ASSERT_TRUE(*store.GetRange("a/b/c", ByteRange::Suffix(3), &out));
  EXPECT_EQ(out, B("rld"));
  ASSERT_TRUE(*store.GetRange("a/b/c", ByteRange::Prefix(11, 0), &out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(store.GetRange("a/b/c", ByteRange::Prefix(8, 10), &out).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(store.GetRange("a/b/c", ByteRange::Prefix(20, 1), &out).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(store.GetRange("a/b/c", ByteRange::Suffix(12), &out).status().code(),
            StatusCode::kDataLoss);
  EXPECT_FALSE(*store.GetRange("a/missing", ByteRange::Prefix(0, 1), &out));
  Bytes dst(11);
  EXPECT_EQ(**store.GetExact("a/b/c", dst), 11u);
  EXPECT_EQ(dst, B("hello world"));
  Bytes other(4, 'x');
  EXPECT_EQ(**store.GetExact("a/b/c", other), 11u);
  EXPECT_EQ(other, B("xxxx"));
  EXPECT_FALSE(store.GetExact("a/missing", dst)->has_value());
  EXPECT_EQ(store.Get("../etc/passwd", &out).status().code(), StatusCode::kInvalidArgument);

  Status listed = store.List("").status();
  EXPECT_EQ(listed.code(), StatusCode::kUnimplemented);
  EXPECT_NE(listed.message().find("no listing"), std::string::npos) << listed.ToString();
  EXPECT_EQ(store.Set("a/new", B("x")).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store.Delete("a/b/c").code(), StatusCode::kPermissionDenied);
}

TEST(HttpStore, ReadsFromAServerThatIgnoresRanges) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/a/b");
  std::ofstream(dir.path() + "/a/b/c") << "hello world";
  const int port = testing::FreePort();
  testing::ChildProcess server;
  ASSERT_TRUE(server.Start({"/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1",
                            "--directory", dir.path(), std::to_string(port)}));
  ASSERT_TRUE(testing::WaitForPort(port, 30));
  auto store = OpenHttpStore({.base_url = "http://127.0.0.1:" + std::to_string(port) + "/"});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  CheckReads(**store);
}

TEST(HttpStore, ReadsRangesFromAnS3ServerAnonymously) {
  testing::S3TestServer s3;
  const std::string why = s3.Start();
  if (!why.empty()) GTEST_SKIP() << why;
  auto writer = *OpenS3Store(s3.Options("public"));
  ASSERT_TRUE(writer->Set("a/b/c", B("hello world")).ok());
  auto store =
      OpenHttpStore({.base_url = s3.endpoint() + "/" + testing::S3TestServer::kBucket + "/public"});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  CheckReads(**store);
}

TEST(HttpStore, ConfigErrors) {
  EXPECT_EQ(OpenHttpStore({.base_url = "ftp://x"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenS3Store({.endpoint = "http://x", .bucket = ""}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenS3Store({.endpoint = "x:9000", .bucket = "b"}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zarrd
