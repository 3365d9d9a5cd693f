#include "server/byte_budget.h"

#include <gtest/gtest.h>

#include <thread>

namespace zarrd::server {
namespace {

TEST(ByteBudget, WaitsForRoomButNeverStallsAStreamThatHoldsNothing) {
  ByteBudget budget(100);
  std::atomic<bool> cancelled{false};
  ASSERT_TRUE(budget.Acquire(60, false, cancelled));
  // Over the budget, but the caller holds nothing: granted (progress for every stream).
  ASSERT_TRUE(budget.Acquire(60, true, cancelled));
  EXPECT_EQ(budget.held(), 120u);
  // A caller that holds bytes waits until enough come back.
  std::atomic<bool> got{false};
  std::thread waiter([&] { got = budget.Acquire(30, false, cancelled); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(got);
  budget.Release(60);
  waiter.join();
  EXPECT_TRUE(got);
  EXPECT_EQ(budget.held(), 90u);
  // Cancellation ends a wait.
  std::thread cancelled_waiter([&] { got = budget.Acquire(50, false, cancelled); });
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  cancelled = true;
  cancelled_waiter.join();
  EXPECT_FALSE(got);
  EXPECT_EQ(budget.held(), 90u);
}

}  // namespace
}  // namespace zarrd::server
