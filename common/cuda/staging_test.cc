// StagingPool::Acquire: a busy free slot is not waited for while the pool may grow.
#include "common/cuda/staging.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/cuda/cuda_test_util.h"

namespace zarrd::cuda {
namespace {

// Holds its stream until `*released` is set.
void CUDART_CB HoldStream(void* released) {
  while (!static_cast<std::atomic<bool>*>(released)->load()) std::this_thread::yield();
}

TEST(StagingPool, ANewSlotRatherThanWaitingForABusyOneThenTheOldestAtTheLimit) {
  ZARRD_REQUIRE_GPU();
  StagingPool pool(0, 2, 0);
  StagingSlot* a = *pool.Acquire(1024);
  std::atomic<bool> released{false};
  ASSERT_EQ(cudaLaunchHostFunc(a->stream, HoldStream, &released), cudaSuccess);
  ASSERT_TRUE(pool.Release(a, true).ok());
  StagingSlot* b = *pool.Acquire(1024);        // `a` still has work queued
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // Acquire's query of `a` left no error behind
  EXPECT_NE(b, a);
  EXPECT_EQ(cudaEventQuery(a->done), cudaErrorNotReady);
  (void)cudaGetLastError();
  ASSERT_TRUE(pool.Release(b, false).ok());
  released = true;
  StagingSlot* c = *pool.Acquire(1024);  // at the limit: the oldest free slot, once it is done
  EXPECT_EQ(c, a);
  EXPECT_EQ(cudaEventQuery(c->done), cudaSuccess);
  ASSERT_TRUE(pool.Release(c, false).ok());
  // The batch pool is a pool of its own.
  StagingPool with_batches(0, 2);
  EXPECT_NE(&with_batches.batch_pool(), &with_batches);
  EXPECT_EQ(&pool.batch_pool(), &pool);
}

}  // namespace
}  // namespace zarrd::cuda
