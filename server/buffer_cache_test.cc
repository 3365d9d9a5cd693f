#include "server/buffer_cache.h"

#include <gtest/gtest.h>

namespace zarrd::server {
namespace {

TEST(BufferCache, ReusesBuffersOfTheSameSizeUpToItsLimitAndClears) {
  BufferCache cache(3000);
  auto a = cache.Take(1000);
  uint8_t* a_data = a.get();
  cache.Give(std::move(a), 1000);
  EXPECT_EQ(cache.kept_bytes(), 1000u);
  auto other_size = cache.Take(500);  // not the kept one
  EXPECT_NE(other_size.get(), a_data);
  EXPECT_EQ(cache.kept_bytes(), 1000u);
  auto again = cache.Take(1000);
  EXPECT_EQ(again.get(), a_data);
  EXPECT_EQ(cache.kept_bytes(), 0u);

  cache.Give(std::move(again), 1000);
  cache.Give(cache.Take(2000), 2000);
  EXPECT_EQ(cache.kept_bytes(), 3000u);
  cache.Give(std::move(other_size), 500);  // over the limit: freed, not kept
  EXPECT_EQ(cache.kept_bytes(), 3000u);
  cache.Clear();
  EXPECT_EQ(cache.kept_bytes(), 0u);
}

}  // namespace
}  // namespace zarrd::server
