#include "common/kvstore/store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/testing/s3_test_server.h"
#include "common/testing/test_util.h"

namespace zarrd {
namespace {

Bytes B(const std::string& s) { return Bytes(s.begin(), s.end()); }

// One s3rver for the process; each test works under a prefix of its own.
testing::S3TestServer* SharedS3(std::string* why) {
  static testing::S3TestServer server;
  static const std::string error = server.Start();
  *why = error;
  return error.empty() ? &server : nullptr;
}

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      store_ = MakeMemoryStore();
    } else if (GetParam() == "s3") {
      static int test_number = 0;
      std::string why;
      testing::S3TestServer* server = SharedS3(&why);
      if (server == nullptr) GTEST_SKIP() << why;
      auto s = OpenS3Store(server->Options("store-test/" + std::to_string(++test_number)));
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      store_ = *s;
    } else {
      auto s = OpenLocalStore(dir_.path() + "/root");
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      store_ = *s;
    }
  }
  testing::TempDir dir_;
  std::shared_ptr<Store> store_;
};

TEST_P(StoreTest, SetGetRangeListDelete) {
  ASSERT_TRUE(store_->Set("a/b/c", B("hello world")).ok());
  ASSERT_TRUE(store_->Set("a/d", B("x")).ok());
  ASSERT_TRUE(store_->Set("top", B("")).ok());
  Bytes out;
  ASSERT_TRUE(*store_->Get("a/b/c", &out));
  EXPECT_EQ(out, B("hello world"));
  ASSERT_TRUE(*store_->Get("top", &out));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(*store_->Get("a/missing", &out));
  EXPECT_FALSE(*store_->Get("nothere/x", &out));
  ASSERT_TRUE(*store_->GetRange("a/b/c", ByteRange::Prefix(6, 5), &out));
  EXPECT_EQ(out, B("world"));
  ASSERT_TRUE(*store_->GetRange("a/b/c", ByteRange::Suffix(3), &out));
  EXPECT_EQ(out, B("rld"));
  EXPECT_EQ(store_->GetRange("a/b/c", ByteRange::Prefix(8, 10), &out).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(*store_->List(""), (std::vector<std::string>{"a/b/c", "a/d", "top"}));
  EXPECT_EQ(*store_->List("a/"), (std::vector<std::string>{"a/b/c", "a/d"}));
  EXPECT_EQ(*store_->List("a/b"), (std::vector<std::string>{"a/b/c"}));
  ASSERT_TRUE(store_->Set("a/b/c", B("new")).ok());
  ASSERT_TRUE(*store_->Get("a/b/c", &out));
  EXPECT_EQ(out, B("new"));
  ASSERT_TRUE(store_->Delete("a/b/c").ok());
  ASSERT_TRUE(store_->Delete("a/b/c").ok());
  EXPECT_FALSE(*store_->Get("a/b/c", &out));
  ASSERT_TRUE(store_->DeletePrefix("a/").ok());
  EXPECT_EQ(*store_->List(""), (std::vector<std::string>{"top"}));
}

TEST_P(StoreTest, GetExactReadsOnlyAValueOfTheExpectedSize) {
  ASSERT_TRUE(store_->Set("a/v", B("0123456789")).ok());
  Bytes dst(10, 'x');
  auto size = store_->GetExact("a/v", dst);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  ASSERT_TRUE(size->has_value());
  EXPECT_EQ(**size, 10u);
  EXPECT_EQ(dst, B("0123456789"));
  // Another size: the value's size comes back and the destination is left alone.
  Bytes small(4, 'x');
  size = store_->GetExact("a/v", small);
  ASSERT_TRUE(size.ok() && size->has_value());
  EXPECT_EQ(**size, 10u);
  EXPECT_EQ(small, B("xxxx"));
  Bytes large(12, 'x');
  EXPECT_EQ(**store_->GetExact("a/v", large), 10u);
  EXPECT_EQ(large, B("xxxxxxxxxxxx"));
  // Absent keys, and keys under a value (not a directory), are nullopt.
  EXPECT_FALSE(store_->GetExact("a/missing", dst)->has_value());
  EXPECT_FALSE(store_->GetExact("a/v/deeper", dst)->has_value());
  EXPECT_EQ(store_->GetExact("../x", dst).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, HostileKeysAreRefusedAndNothingIsWritten) {
  Bytes out;
  const std::vector<std::string> keys = {"../x", "a/../../x", "/etc/passwd",          "a//b", "./a",
                                         "a/.",  "",          std::string("a\0b", 3), "a\\b"};
  for (const std::string& key : keys) {
    SCOPED_TRACE(key);
    EXPECT_EQ(store_->Set(key, B("bad")).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(store_->Get(key, &out).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(store_->Delete(key).code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(store_->List("")->empty());
  if (GetParam() == "local") {
    EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/x"));
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, StoreTest, ::testing::Values("memory", "local", "s3"));

TEST(LocalStore, SymlinksOutOfTheRootAreRefused) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path() + "/root");
  std::filesystem::create_directories(dir.path() + "/outside");
  { std::ofstream(dir.path() + "/outside/secret") << "secret"; }
  std::filesystem::create_directory_symlink(dir.path() + "/outside", dir.path() + "/root/link");
  std::filesystem::create_symlink(dir.path() + "/outside/secret", dir.path() + "/root/file");
  Bytes out;
  EXPECT_EQ(store->Get("link/secret", &out).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store->Get("file", &out).status().code(), StatusCode::kPermissionDenied);
  Bytes dst(6);
  EXPECT_EQ(store->GetExact("link/secret", dst).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store->GetExact("file", dst).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store->Set("link/new", B("x")).code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/outside/new"));
  // A symlink inside the root to a place inside the root is fine.
  ASSERT_TRUE(store->Set("real/v", B("inside")).ok());
  std::filesystem::create_directory_symlink("real", dir.path() + "/root/alias");
  ASSERT_TRUE(*store->Get("alias/v", &out));
  EXPECT_EQ(out, B("inside"));
}

TEST(LocalStore, WritesAreAtomicAndLeaveNoTempFiles) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path(), {.fsync = true});
  Bytes big(1 << 20, 0xab);
  Status set = store->Set("k", big);
  ASSERT_TRUE(set.ok()) << set.ToString();
  ASSERT_TRUE(store->Set("k", B("small")).ok());
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path().filename(), "k");
  }
  EXPECT_EQ(files, 1);
  // A temp file left by a crash is not a key.
  { std::ofstream(dir.path() + "/k.zarrd-tmp-1-0123456789abcdef-1") << "torn"; }
  EXPECT_EQ(*store->List(""), (std::vector<std::string>{"k"}));
}

// Without fsync, a value replaces an existing file by exchanging names and unlinking the old.
TEST(LocalStore, ReplacingValuesKeepsOneFileAndRefusesToReplaceADirectory) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store->Set("a/k", Bytes(1000 + i, static_cast<uint8_t>(i))).ok());
    Bytes got;
    ASSERT_TRUE(*store->Get("a/k", &got));
    EXPECT_EQ(got, Bytes(1000 + i, static_cast<uint8_t>(i)));
  }
  std::vector<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(dir.path() + "/a")) {
    names.push_back(e.path().filename());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"k"}));
  std::filesystem::create_directories(dir.path() + "/a/d/inner");
  Status s = store->Set("a/d", B("value"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a/d"), std::string::npos) << s.ToString();
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/a/d/inner"));
  names.clear();
  for (auto& e : std::filesystem::directory_iterator(dir.path() + "/a")) {
    names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"d", "k"}));
}

// Deleting "c/2/0" leaves the directory "c/2"; a key of that name (an array of lower rank
// created at the same path) goes in its place.
TEST(LocalStore, AKeyReplacesTheEmptyDirectoryOfDeletedKeys) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path());
  ASSERT_TRUE(store->Set("x/c/2/0", B("old")).ok());
  ASSERT_TRUE(store->Delete("x/c/2/0").ok());
  ASSERT_TRUE(store->Set("x/c/2", B("new")).ok());
  Bytes got;
  ASSERT_TRUE(*store->Get("x/c/2", &got));
  EXPECT_EQ(got, B("new"));
  EXPECT_EQ(*store->List("x/"), std::vector<std::string>{"x/c/2"});
}

// A write that leaves a chunk all fill value deletes its key; where that key is the directory of
// an earlier array's keys, it holds no value, and the delete succeeds.
TEST(LocalStore, DeletingAKeyThatIsADirectoryDeletesNoValue) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path());
  ASSERT_TRUE(store->Set("x/c/2/0", B("old")).ok());
  ASSERT_TRUE(store->Set("x/c/3/0", B("kept")).ok());
  ASSERT_TRUE(store->Delete("x/c/2/0").ok());
  EXPECT_TRUE(store->Delete("x/c/2").ok());
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/x/c/2"));
  EXPECT_TRUE(store->Delete("x/c/3").ok());
  Bytes got;
  ASSERT_TRUE(*store->Get("x/c/3/0", &got));
  EXPECT_EQ(got, B("kept"));
  EXPECT_EQ(*store->List("x/"), std::vector<std::string>{"x/c/3/0"});
}

TEST(LocalStore, StaleTemporariesOfDeadProcessesAreRemoved) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path());
  ASSERT_TRUE(store->Set("a/b/k", B("value")).ok());
  // A process that has exited (a child we reaped) and one that is alive (this one).
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string token = "-00000000deadbeef-";
  const std::string dead = dir.path() + "/a/b/k.zarrd-tmp-" + std::to_string(child) + token + "7";
  const std::string empty = dir.path() + "/a/e.zarrd-tmp-" + std::to_string(child) + token + "8";
  const std::string live =
      dir.path() + "/a/k.zarrd-tmp-" + std::to_string(::getppid()) + token + "1";
  // This process's pid with another token: left by an earlier process that had our pid (a
  // restarted container), so stale.
  const std::string reused =
      dir.path() + "/a/r.zarrd-tmp-" + std::to_string(::getpid()) + token + "2";
  // Names zarrd never writes, though they look alike: user files, kept and listed.
  const std::vector<std::string> users = {"u.zarrd-tmp-" + std::to_string(child) + "-7",
                                          "v.zarrd-tmp-" + std::to_string(child) + "-notes.txt",
                                          "w.zarrd-tmp-" + std::to_string(child) + token + "x"};
  { std::ofstream(dead) << "torn"; }
  { std::ofstream f(empty); }  // 0 bytes: a crash between create and write
  { std::ofstream(live) << "in progress"; }
  { std::ofstream(reused) << "torn"; }
  for (const auto& u : users) std::ofstream(dir.path() + "/" + u) << "mine";
  auto removed = store->RemoveStaleTemporaries();
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, 3u);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_FALSE(std::filesystem::exists(empty));
  EXPECT_FALSE(std::filesystem::exists(reused));
  EXPECT_TRUE(std::filesystem::exists(live));
  for (const auto& u : users) EXPECT_TRUE(std::filesystem::exists(dir.path() + "/" + u)) << u;
  std::vector<std::string> keys = {"a/b/k"};
  keys.insert(keys.end(), users.begin(), users.end());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(*store->List(""), keys);
}

TEST(LocalStore, ReadOnlyDirectoryIsPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: directory permissions do not apply";
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path());
  ::chmod(dir.path().c_str(), 0500);
  EXPECT_EQ(store->Set("k", B("x")).code(), StatusCode::kPermissionDenied);
  ::chmod(dir.path().c_str(), 0700);
}

TEST(LocalStore, FifosSocketsAndDevicesAreDataLossWithoutBlocking) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path());
  ASSERT_EQ(::mkfifo((dir.path() + "/fifo").c_str(), 0644), 0);
  std::filesystem::create_directories(dir.path() + "/dev");
  std::filesystem::create_symlink("/dev/zero", dir.path() + "/zero");  // leads outside: refused
  Bytes out;
  for (const char* key : {"fifo"}) {
    auto got = store->Get(key, &out);  // would block forever in open() without O_NONBLOCK
    EXPECT_EQ(got.status().code(), StatusCode::kDataLoss) << got.status().ToString();
    EXPECT_NE(got.status().message().find("not a regular file"), std::string::npos);
    Bytes dst(4);
    EXPECT_EQ(store->GetExact(key, dst).status().code(), StatusCode::kDataLoss);
  }
  EXPECT_EQ(store->Get("zero", &out).status().code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(*store->Get("dev", &out));  // a directory is no value
}

TEST(LocalStore, ValuesLargerThanTheirBoundAreDataLossBeforeTheyAreRead) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path());
  {
    std::ofstream f(dir.path() + "/sparse");
    f.seekp((uint64_t{40} << 30) - 1);  // 40 GiB, sparse: takes no disk
    f.put('x');
  }
  Bytes out;
  auto got = store->GetBounded("sparse", uint64_t{16} << 20, &out);
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("42949672960 bytes"), std::string::npos)
      << got.status().ToString();
  EXPECT_LT(out.capacity(), size_t{1} << 20);
  ASSERT_TRUE(store->Set("small", B("12345")).ok());
  EXPECT_TRUE(*store->GetBounded("small", 5, &out));
  EXPECT_EQ(store->GetBounded("small", 4, &out).status().code(), StatusCode::kDataLoss);
  auto memory = MakeMemoryStore();
  ASSERT_TRUE(memory->Set("small", B("12345")).ok());
  EXPECT_EQ(memory->GetBounded("small", 4, &out).status().code(), StatusCode::kDataLoss);
}

TEST(LocalStore, ListWalksATreeDeeperThanTheStackWouldAllow) {
  testing::TempDir dir;
  auto store = *OpenLocalStore(dir.path());
  // 3,000 levels with at most 256 descriptors: a recursive walk held one a level (and a stack
  // frame: the hardening suite's tree of 30,000 levels crashed zarrd).
  std::string key;
  {
    int fd = ::open(dir.path().c_str(), O_DIRECTORY | O_RDONLY);
    for (int i = 0; i < 3000; ++i) {
      ASSERT_EQ(::mkdirat(fd, "d", 0755), 0);
      const int next = ::openat(fd, "d", O_DIRECTORY | O_RDONLY);
      ::close(fd);
      fd = next;
      key += "d/";
    }
    const int file = ::openat(fd, "v", O_WRONLY | O_CREAT, 0644);
    ASSERT_EQ(::write(file, "x", 1), 1);
    ::close(file);
    ::close(fd);
  }
  ASSERT_TRUE(store->Set("top", B("t")).ok());
  struct rlimit saved;
  ::getrlimit(RLIMIT_NOFILE, &saved);
  struct rlimit low = saved;
  low.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  auto keys = store->List("");
  ::setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(*keys, (std::vector<std::string>{key + "v", "top"}));
  // Removed from the bottom up through a descriptor a level: remove_all resolves whole paths,
  // which took seconds here.
  std::vector<int> levels = {::open(dir.path().c_str(), O_DIRECTORY | O_RDONLY)};
  for (int i = 0; i < 3000; ++i) levels.push_back(::openat(levels.back(), "d", O_DIRECTORY));
  ::unlinkat(levels.back(), "v", 0);
  for (size_t i = levels.size() - 1; i > 0; --i) {
    ::close(levels[i]);
    ASSERT_EQ(::unlinkat(levels[i - 1], "d", AT_REMOVEDIR), 0);
  }
  ::close(levels[0]);
}

}  // namespace
}  // namespace zarrd
