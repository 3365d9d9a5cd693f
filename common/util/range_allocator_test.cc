#include "common/util/range_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace zarrd {
namespace {

TEST(RangeAllocator, AlignsAndExhausts) {
  RangeAllocator a(4096, 256);
  auto x = a.Allocate(1);
  auto y = a.Allocate(300);
  ASSERT_TRUE(x && y);
  EXPECT_EQ(*x, 0u);
  EXPECT_EQ(*y, 256u);  // 1 byte takes one aligned block
  EXPECT_EQ(a.bytes_in_use(), 256u + 512u);
  EXPECT_FALSE(a.Allocate(4096 - 768 + 1).has_value());
  auto z = a.Allocate(4096 - 768);
  ASSERT_TRUE(z);
  EXPECT_EQ(*z, 768u);
  EXPECT_FALSE(a.Allocate(1).has_value());
  EXPECT_EQ(a.largest_free_block(), 0u);
}

TEST(RangeAllocator, CoalescesFreedNeighbours) {
  RangeAllocator a(1024, 256);
  auto b0 = *a.Allocate(256), b1 = *a.Allocate(256), b2 = *a.Allocate(256), b3 = *a.Allocate(256);
  a.Free(b1);
  a.Free(b3);
  EXPECT_EQ(a.largest_free_block(), 256u);
  EXPECT_FALSE(a.Allocate(512).has_value());
  a.Free(b2);  // joins b1 and b3
  EXPECT_EQ(a.largest_free_block(), 768u);
  a.Free(b0);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.largest_free_block(), 1024u);
  EXPECT_EQ(*a.Allocate(1024), 0u);
}

// Random allocations and frees never overlap and always account for every byte.
TEST(RangeAllocator, RandomWorkloadKeepsBlocksDisjoint) {
  std::mt19937_64 rng(7);
  RangeAllocator a(1 << 20, 512);
  std::vector<std::pair<uint64_t, uint64_t>> live;  // offset, rounded size
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      const uint64_t n = 1 + rng() % 20000;
      auto off = a.Allocate(n);
      if (!off) continue;
      EXPECT_EQ(*off % 512, 0u);
      live.push_back({*off, (n + 511) / 512 * 512});
    } else {
      const size_t i = rng() % live.size();
      a.Free(live[i].first);
      live.erase(live.begin() + static_cast<ptrdiff_t>(i));
    }
    if (step % 1000 == 0) {
      auto sorted = live;
      std::sort(sorted.begin(), sorted.end());
      uint64_t total = 0;
      for (size_t i = 0; i < sorted.size(); ++i) {
        total += sorted[i].second;
        EXPECT_LE(sorted[i].first + sorted[i].second, a.size());
        if (i + 1 < sorted.size()) {
          EXPECT_LE(sorted[i].first + sorted[i].second, sorted[i + 1].first);
        }
      }
      EXPECT_EQ(total, a.bytes_in_use());
    }
  }
  for (auto& [off, size] : live) a.Free(off);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.largest_free_block(), a.size());
}

}  // namespace
}  // namespace zarrd
