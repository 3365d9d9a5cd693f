#include "common/cuda/host_copy.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/cuda/cuda_test_util.h"

namespace zarrd::cuda {
namespace {

// The bytes that come back are the ones uploaded with cudaMemcpy, for sizes around the part
// size, with as many threads as parts or fewer, and with fewer staging slots than threads; the
// bytes past the destination stay untouched.
TEST(CopyToHost, ReturnsTheBytesUploaded) {
  ZARRD_REQUIRE_GPU();
  const size_t part = kHostCopyPartBytes;
  std::mt19937_64 rng(7);
  for (size_t slots : {1, 8}) {
    StagingPool staging(0, slots);
    for (size_t workers : {0, 5}) {
      ThreadPool pool(workers);
      for (size_t size : {size_t{0}, size_t{1}, part - 1, part, part + 1, 3 * part + 7}) {
        SCOPED_TRACE("slots " + std::to_string(slots) + ", workers " + std::to_string(workers) +
                     ", " + std::to_string(size) + " bytes");
        std::vector<uint8_t> input(size);
        for (auto& b : input) b = static_cast<uint8_t>(rng());
        uint8_t* device = nullptr;
        ASSERT_EQ(cudaMalloc(&device, std::max<size_t>(size, 1)), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(device, input.data(), size, cudaMemcpyHostToDevice), cudaSuccess);
        std::vector<uint8_t> out(size + 64, 0xA5);
        Status s = CopyToHost(staging, device, {out.data(), size}, pool);
        cudaFree(device);
        ASSERT_TRUE(s.ok()) << s.ToString();
        EXPECT_TRUE(std::equal(input.begin(), input.end(), out.begin()));
        EXPECT_EQ(std::count(out.begin() + size, out.end(), 0xA5), 64);
      }
    }
  }
}

TEST(CopyToHost, StopsWhenCancelled) {
  ZARRD_REQUIRE_GPU();
  StagingPool staging(0, 4);
  ThreadPool pool(2);
  const size_t size = 4 * kHostCopyPartBytes;
  uint8_t* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, size), cudaSuccess);
  std::vector<uint8_t> out(size);
  const std::atomic<bool> cancelled{true};
  EXPECT_EQ(CopyToHost(staging, device, {out.data(), size}, pool, &cancelled).code(),
            StatusCode::kCancelled);
  cudaFree(device);
}

}  // namespace
}  // namespace zarrd::cuda
