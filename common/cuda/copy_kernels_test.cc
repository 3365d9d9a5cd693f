#include "common/cuda/copy_kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/cuda/cuda_test_util.h"

namespace zarrd::cuda {
namespace {

// A block of `counts` inside a C-order array of `shape` starting at `start` with `steps`
// (negative steps walk backwards): byte offset of the first element and byte strides.
struct Block {
  std::vector<int64_t> counts, strides;
  int64_t offset = 0;
};

Block RandomBlock(std::mt19937& rng, const std::vector<int64_t>& shape, size_t es) {
  Block b;
  std::vector<int64_t> c_strides(shape.size());
  int64_t s = static_cast<int64_t>(es);
  for (size_t d = shape.size(); d-- > 0;) {
    c_strides[d] = s;
    s *= shape[d];
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t step = static_cast<int64_t>(rng() % 3) + 1;
    if (rng() % 4 == 0) step = -step;
    const int64_t max_count = (shape[d] - 1) / std::abs(step) + 1;
    const int64_t count = 1 + static_cast<int64_t>(rng() % max_count);
    const int64_t span = (count - 1) * std::abs(step);
    const int64_t first = step > 0 ? static_cast<int64_t>(rng() % (shape[d] - span))
                                   : span + static_cast<int64_t>(rng() % (shape[d] - span));
    b.counts.push_back(count);
    b.strides.push_back(step * c_strides[d]);
    b.offset += first * c_strides[d];
  }
  return b;
}

// Reference on the CPU: walk every index.
void CpuCopy(const uint8_t* src, const std::vector<int64_t>& ss, uint8_t* dst,
             const std::vector<int64_t>& ds, const std::vector<int64_t>& counts, size_t es) {
  std::vector<int64_t> idx(counts.size(), 0);
  int64_t total = 1;
  for (int64_t c : counts) total *= c;
  for (int64_t n = 0; n < total; ++n) {
    int64_t so = 0, dof = 0;
    for (size_t d = 0; d < counts.size(); ++d) {
      so += idx[d] * ss[d];
      dof += idx[d] * ds[d];
    }
    std::memcpy(dst + dof, src + so, es);
    for (size_t d = counts.size(); d-- > 0;) {
      if (++idx[d] < counts[d]) break;
      idx[d] = 0;
    }
  }
}

TEST(CopyKernels, RandomStridedCopiesMatchTheCpu) {
  ZARRD_REQUIRE_GPU();
  std::mt19937 rng(11);
  for (size_t es : {1, 2, 4, 8, 16}) {
    for (int trial = 0; trial < 40; ++trial) {
      const size_t rank = 1 + rng() % 4;
      std::vector<int64_t> shape;
      for (size_t d = 0; d < rank; ++d) shape.push_back(1 + rng() % 17);
      int64_t n = static_cast<int64_t>(es);
      for (auto x : shape) n *= x;
      Block src_block = RandomBlock(rng, shape, es);
      // The destination: a C-order array of the block's counts, placed reversed along dim 0
      // half of the time.
      std::vector<int64_t> dst_strides(rank);
      int64_t s = static_cast<int64_t>(es);
      for (size_t d = rank; d-- > 0;) {
        dst_strides[d] = s;
        s *= src_block.counts[d];
      }
      const int64_t dst_bytes = s;
      int64_t dst_offset = 0;
      if (rng() % 2) {
        dst_offset = (src_block.counts[0] - 1) * dst_strides[0];
        dst_strides[0] = -dst_strides[0];
      }
      std::vector<uint8_t> host(n);
      for (auto& x : host) x = static_cast<uint8_t>(rng());
      std::vector<uint8_t> expect(dst_bytes, 0xEE);
      CpuCopy(host.data() + src_block.offset, src_block.strides, expect.data() + dst_offset,
              dst_strides, src_block.counts, es);
      uint8_t *dsrc, *ddst;
      ASSERT_EQ(cudaMalloc(&dsrc, n), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&ddst, dst_bytes), cudaSuccess);
      cudaMemcpy(dsrc, host.data(), n, cudaMemcpyHostToDevice);
      cudaMemset(ddst, 0xEE, dst_bytes);
      auto desc = MakeCopyDesc(dsrc + src_block.offset, src_block.strides.data(), ddst + dst_offset,
                               dst_strides.data(), src_block.counts.data(), rank, es);
      ASSERT_TRUE(desc.ok());
      if (trial % 2) {
        ASSERT_TRUE(LaunchStridedCopy(*desc, nullptr).ok());
      } else {  // the batched launch, with a fill of nothing beside it
        uint8_t *pinned, *scratch;
        cudaMallocHost(&pinned, 2 * sizeof(StridedCopyDesc));
        cudaMalloc(&scratch, 2 * sizeof(StridedCopyDesc));
        ASSERT_TRUE(LaunchStridedCopies(&*desc, 1, pinned, scratch, nullptr).ok());
        cudaDeviceSynchronize();
        cudaFreeHost(pinned);
        cudaFree(scratch);
      }
      auto got = testing::ToHost<uint8_t>(ddst, dst_bytes);
      ASSERT_EQ(got, expect) << "elem " << es << " trial " << trial;
      cudaFree(dsrc);
      cudaFree(ddst);
    }
  }
}

TEST(CopyKernels, FillWritesThePatternOnlyWhereSelected) {
  ZARRD_REQUIRE_GPU();
  const std::vector<int64_t> counts = {3, 5}, strides = {10 * 8, 2 * 8};  // every other column
  uint8_t* d;
  ASSERT_EQ(cudaMalloc(&d, 3 * 10 * 8), cudaSuccess);
  cudaMemset(d, 0, 3 * 10 * 8);
  const double value = -2.5;
  auto desc = MakeFillDesc(d, strides.data(), counts.data(), 2,
                           reinterpret_cast<const uint8_t*>(&value), 8);
  ASSERT_TRUE(desc.ok());
  ASSERT_TRUE(LaunchStridedCopy(*desc, nullptr).ok());
  auto got = testing::ToHost<double>(d, 30);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 10; ++c) EXPECT_EQ(got[r * 10 + c], c % 2 == 0 ? -2.5 : 0.0) << r << c;
  cudaFree(d);
}

}  // namespace
}  // namespace zarrd::cuda
