#include "common/cuda/device_pool.h"

#include <gtest/gtest.h>

#include "common/cuda/cuda_test_util.h"

namespace zarrd::cuda {
namespace {

TEST(DevicePool, SubAllocatesAlignedAndReuses) {
  ZARRD_REQUIRE_GPU();
  auto pool = DevicePool::Create(
      {.device = 0, .name = "test", .capacity_bytes = 64 << 20, .slab_bytes = 32 << 20});
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  auto a = (*pool)->Allocate(1000);
  auto b = (*pool)->Allocate(5000);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->slab_id(), (*b)->slab_id());
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*b)->data()) % 256, 0u);
  EXPECT_GE((*b)->offset(), (*a)->offset() + 1000);
  EXPECT_EQ(cudaMemset((*b)->data(), 7, 5000), cudaSuccess);
  const uint64_t a_offset = (*a)->offset();
  a->reset();
  auto c = (*pool)->Allocate(512);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->offset(), a_offset);  // the freed block is first fit
  EXPECT_EQ((*pool)->stats().allocations, 2u);
  auto handle = (*pool)->IpcHandle((*c)->slab_id());
  ASSERT_TRUE(handle.ok());
  EXPECT_NE(*handle, IpcHandleBytes{});
}

TEST(DevicePool, ExhaustionIsResourceExhaustedWithNumbers) {
  ZARRD_REQUIRE_GPU();
  auto pool = DevicePool::Create(
      {.device = 0, .name = "small", .capacity_bytes = 8 << 20, .slab_bytes = 4 << 20});
  ASSERT_TRUE(pool.ok());
  auto a = (*pool)->Allocate(3 << 20);
  auto b = (*pool)->Allocate(3 << 20);  // a second slab
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->slab_id(), (*b)->slab_id());
  auto c = (*pool)->Allocate(3 << 20);
  ASSERT_EQ(c.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(c.status().message().find("capacity 8388608"), std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("in use"), std::string::npos);
  a->reset();
  EXPECT_TRUE((*pool)->Allocate(3 << 20).ok());
  EXPECT_EQ((*pool)->stats().slabs, 2u);
}

}  // namespace
}  // namespace zarrd::cuda
