#include "common/util/thread_pool.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <thread>

namespace zarrd {
namespace {

// Each thread that ran indices leaves once, after its last index; threads that ran none do not.
TEST(ThreadPool, EachThreadThatRanIndicesLeavesOnceAfterItsLast) {
  ThreadPool pool(3);
  for (size_t n : {1, 2, 7, 1000}) {
    SCOPED_TRACE(n);
    std::mutex mutex;
    std::map<std::thread::id, size_t> ran, ran_at_leave, left;
    std::vector<int> hits(n, 0);
    Status s = pool.ParallelFor(
        n,
        [&](size_t i) {
          std::lock_guard lock(mutex);
          ++hits[i];
          ++ran[std::this_thread::get_id()];
          EXPECT_EQ(left.count(std::this_thread::get_id()), 0u);
          return OkStatus();
        },
        nullptr,
        [&] {
          std::lock_guard lock(mutex);
          ++left[std::this_thread::get_id()];
          ran_at_leave[std::this_thread::get_id()] = ran[std::this_thread::get_id()];
          return OkStatus();
        });
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(hits, std::vector<int>(n, 1));
    EXPECT_EQ(ran_at_leave, ran);
    for (const auto& [id, count] : left) EXPECT_EQ(count, 1u);
    EXPECT_EQ(left.size(), ran.size());
  }
}

TEST(ThreadPool, AnErrorOnLeavingIsTheResult) {
  ThreadPool pool(2);
  Status s = pool.ParallelFor(
      64, [](size_t) { return OkStatus(); }, nullptr, [] { return DataLoss("flush failed"); });
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "flush failed");
  s = pool.ParallelFor(
      64, [](size_t i) { return i == 5 ? InvalidArgument("index 5") : OkStatus(); }, nullptr,
      [] { return OkStatus(); });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zarrd
