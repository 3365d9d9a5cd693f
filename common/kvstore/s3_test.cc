// The S3 store against a real S3 server (s3rver) and, for retries, the fault proxy in front of it.
// The store-wide contract (values, ranges, listing, hostile keys) is StoreTest's "s3" case.
#include <gtest/gtest.h>

#include <thread>

#include "common/kvstore/object_store.h"
#include "common/testing/s3_test_server.h"

namespace zarrd {
namespace {

Bytes B(const std::string& s) { return Bytes(s.begin(), s.end()); }

class S3StoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::S3TestServer();
    why_ = server_->Start();
    if (!why_.empty()) return;
    proxy_ = new testing::FaultProxy();
    why_ = proxy_->Start(server_->port());
  }
  static void TearDownTestSuite() {
    delete proxy_;
    delete server_;
    proxy_ = nullptr;
    server_ = nullptr;
  }
  void SetUp() override {
    if (!why_.empty()) GTEST_SKIP() << why_;
  }
  // A store under a prefix of this test's own, direct or through the fault proxy.
  std::shared_ptr<Store> Open(bool through_proxy, S3StoreOptions* options = nullptr) {
    S3StoreOptions o = options ? *options : server_->Options("");
    o.prefix =
        std::string("s3-test/") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (through_proxy) o.endpoint = proxy_->endpoint();
    auto s = OpenS3Store(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  static testing::S3TestServer* server_;
  static testing::FaultProxy* proxy_;
  static std::string why_;
};
testing::S3TestServer* S3StoreTest::server_ = nullptr;
testing::FaultProxy* S3StoreTest::proxy_ = nullptr;
std::string S3StoreTest::why_;

TEST_F(S3StoreTest, ListingFollowsContinuationTokens) {
  S3StoreOptions o = server_->Options("");
  o.list_page_keys = 2;
  auto store = Open(true, &o);  // the proxy checks each page's signed query
  std::vector<std::string> keys;
  for (int i = 0; i < 7; ++i) keys.push_back("g/c/" + std::to_string(i));
  for (const auto& k : keys) ASSERT_TRUE(store->Set(k, B(k)).ok());
  ASSERT_TRUE(store->Set("other", B("x")).ok());
  const uint64_t before = ObjectStoreStats(*store)->requests.load();
  auto listed = store->List("g/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(*listed, keys);
  EXPECT_EQ(ObjectStoreStats(*store)->requests.load() - before, 4u);  // pages of 2, 2, 2, 1
  ASSERT_TRUE(store->DeletePrefix("g/").ok());
  EXPECT_EQ(*store->List(""), std::vector<std::string>{"other"});
}

TEST_F(S3StoreTest, KeysThatNeedEncodingRoundTrip) {
  auto store = Open(true);  // the proxy checks the signatures of their encoded paths
  const std::vector<std::string> keys = {"a b/c+d", "e%f=g&h", "i~j/k;l,m", "n\xce\xb1/o"};
  for (const auto& k : keys) ASSERT_TRUE(store->Set(k, B("v:" + k)).ok()) << k;
  for (const auto& k : keys) {
    Bytes out;
    ASSERT_TRUE(*store->Get(k, &out)) << k;
    EXPECT_EQ(out, B("v:" + k));
  }
  auto listed = *store->List("");
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(listed, sorted);
}

TEST_F(S3StoreTest, ManyReadsInFlightReuseConnections) {
  auto store = Open(false);
  constexpr int kKeys = 64;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(
        store->Set("c/" + std::to_string(i), Bytes(100000 + i, static_cast<uint8_t>(i))).ok());
  }
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 4; ++round) {
        for (int i = t; i < kKeys; i += 8) {
          Bytes dst(100000 + i);
          auto n = store->GetExact("c/" + std::to_string(i), dst);
          if (!n.ok() || !n->has_value() || **n != dst.size() ||
              dst != Bytes(100000 + i, static_cast<uint8_t>(i))) {
            ++wrong;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  const HttpStats& stats = *ObjectStoreStats(*store);
  EXPECT_GT(stats.max_in_flight.load(), 1u);
  EXPECT_LE(stats.handles_created.load(), 9u);  // one a thread (and the setter's), reused
}

// s3rver does not check SigV4 signatures (it knows the key only); the proxy does.
TEST_F(S3StoreTest, WrongCredentialsArePermissionDeniedAndNotShown) {
  S3StoreOptions wrong_secret = server_->Options("");
  wrong_secret.credentials.secret_access_key = "WRONG-SECRET-123";
  S3StoreOptions wrong_key = server_->Options("");
  wrong_key.credentials.access_key_id = "WRONG-KEY-456";
  wrong_key.credentials.secret_access_key = "WRONG-SECRET-123";
  for (auto [store, code] : {std::pair{Open(true, &wrong_secret), "SignatureDoesNotMatch"},
                             std::pair{Open(false, &wrong_key), "InvalidAccessKeyId"}}) {
    Bytes out;
    for (Status s : {store->Set("k", B("x")), store->Get("k", &out).status()}) {
      EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
      for (const char* part : {"\"k\"", "HTTP 403", code}) {
        EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.ToString();
      }
      EXPECT_EQ(s.message().find("WRONG-SECRET-123"), std::string::npos) << s.ToString();
    }
  }
}

TEST_F(S3StoreTest, MissingBucketIsNotFound) {
  S3StoreOptions o = server_->Options("");
  o.bucket = "no-such-bucket";
  auto store = *OpenS3Store(o);
  Bytes out;
  auto got = store->Get("k", &out);
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound) << got.status().ToString();
  EXPECT_NE(got.status().message().find("NoSuchBucket"), std::string::npos);
  EXPECT_EQ(store->List("").status().code(), StatusCode::kNotFound);
}

// Every transient fault, twice in a row, on writes and reads: nothing is lost.
TEST_F(S3StoreTest, ReadsAndWritesSurviveFaults) {
  auto store = Open(true);
  const Bytes big(3 << 20, 0x5a);
  int expected_retries = 0;
  int n = 0;
  for (const std::string mode : {"status:503", "status:429", "status:500", "cut", "reset"}) {
    SCOPED_TRACE(mode);
    const std::string key = "fault-" + std::to_string(n++);
    Bytes value = big;
    value[0] = static_cast<uint8_t>(mode.size());
    ASSERT_TRUE(proxy_->Inject(mode, 2, key, "PUT"));
    Status set = store->Set(key, value);
    ASSERT_TRUE(set.ok()) << set.ToString();
    ASSERT_TRUE(proxy_->Inject(mode, 2, key, "GET"));
    Bytes out;
    auto got = store->Get(key, &out);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got);
    EXPECT_EQ(out, value);
    ASSERT_TRUE(proxy_->Inject(mode, 2, key, "GET"));
    got = store->GetRange(key, ByteRange::Prefix(1000, 5000), &out);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(out, Bytes(value.begin() + 1000, value.begin() + 6000));
    // A PUT's answer has no body to cut; curl itself reconnects once when a kept connection
    // was reset before answering, so resets are not all our retries.
    if (mode != "reset") expected_retries += mode == "cut" ? 4 : 6;
  }
  EXPECT_GE(proxy_->Injected(), expected_retries);
  EXPECT_GE(ObjectStoreStats(*store)->retries.load(), static_cast<uint64_t>(expected_retries));
}

TEST_F(S3StoreTest, SlowAnswersTimeOutAndAreRetried) {
  S3StoreOptions o = server_->Options("");
  o.http.low_speed_seconds = 1;
  o.http.low_speed_bytes = 1;
  auto store = Open(true, &o);
  ASSERT_TRUE(store->Set("slow", B("patience")).ok());
  ASSERT_TRUE(proxy_->Inject("slow:3", 1, "slow", "GET"));
  const auto start = std::chrono::steady_clock::now();
  Bytes out;
  auto got = store->Get("slow", &out);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(out, B("patience"));
  EXPECT_EQ(ObjectStoreStats(*store)->retries.load(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2900));
}

TEST_F(S3StoreTest, WhenRetriesRunOutTheErrorSaysWhy) {
  S3StoreOptions o = server_->Options("");
  o.http.max_attempts = 3;
  auto store = Open(true, &o);
  ASSERT_TRUE(store->Set("busy", B("x")).ok());
  ASSERT_TRUE(proxy_->Inject("status:503", 3, "busy", "GET"));
  Bytes out;
  Status s = store->Get("busy", &out).status();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  for (const char* part : {"s3 store", "GET \"busy\"", "HTTP 503", "SlowDown", "3 attempt(s)"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.ToString();
  }
  EXPECT_EQ(s.message().find(testing::S3TestServer::kKey), std::string::npos) << s.ToString();

  // More resets than attempts: curl's own reconnects of a kept connection take some.
  ASSERT_TRUE(store->Set("gone", B("y")).ok());
  ASSERT_TRUE(proxy_->Inject("reset", 20, "gone", "GET"));
  s = store->Get("gone", &out).status();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("GET \"gone\""), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("3 attempt(s)"), std::string::npos) << s.ToString();

  ASSERT_TRUE(proxy_->Inject("status:403", 1, "busy", "GET"));
  s = store->Get("busy", &out).status();
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  // The faults are spent: the value is there.
  ASSERT_TRUE(*store->Get("busy", &out));
  EXPECT_EQ(out, B("x"));
}

TEST_F(S3StoreTest, TheRetryBudgetBoundsRetriesAcrossRequests) {
  S3StoreOptions o = server_->Options("");
  o.http.retry_budget = 2;
  auto store = Open(true, &o);
  ASSERT_TRUE(store->Set("budget", B("x")).ok());
  ASSERT_TRUE(proxy_->Inject("status:500", 10, "budget", "GET"));
  Bytes out;
  Status s = store->Get("budget", &out).status();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("3 attempt(s)"), std::string::npos) << s.ToString();
  s = store->Get("budget", &out).status();  // no tokens left: one attempt
  EXPECT_NE(s.message().find("1 attempt(s)"), std::string::npos) << s.ToString();
  EXPECT_EQ(ObjectStoreStats(*store)->retries.load(), 2u);
}

}  // namespace
}  // namespace zarrd
