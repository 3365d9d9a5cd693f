// Strided copies and fills on the GPU: the placement step of device reads. A descriptor is one
// block copy (a chunk's part of the result); a batch of them runs as one launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/util/status.h"

namespace zarrd::cuda {

constexpr int kMaxCopyRank = 8;

struct StridedCopyDesc {
  const uint8_t* src = nullptr;  // nullptr: fill with `fill`
  uint8_t* dst = nullptr;
  int32_t rank = 0;
  int32_t elem_size = 1;  // 1, 2, 4, 8 or 16 bytes
  int64_t counts[kMaxCopyRank] = {};
  int64_t src_strides[kMaxCopyRank] = {};  // bytes, negative allowed
  int64_t dst_strides[kMaxCopyRank] = {};
  alignas(16) uint8_t fill[16] = {};
};

// A descriptor for dst[i] = src[i], i < counts, with dimensions of one element dropped and
// dimensions that are contiguous on both sides merged (so most copies become rows of bytes).
// INVALID_ARGUMENT when more than kMaxCopyRank dimensions remain.
Result<StridedCopyDesc> MakeCopyDesc(const uint8_t* src, const int64_t* src_strides, uint8_t* dst,
                                     const int64_t* dst_strides, const int64_t* counts, size_t rank,
                                     size_t elem_size);
Result<StridedCopyDesc> MakeFillDesc(uint8_t* dst, const int64_t* dst_strides,
                                     const int64_t* counts, size_t rank, const uint8_t* value,
                                     size_t elem_size);

// One descriptor, passed by value.
Status LaunchStridedCopy(const StridedCopyDesc& desc, cudaStream_t stream);
// Many descriptors in one launch: they are written to `pinned` (host) and uploaded to
// `device_scratch`, each at least count * sizeof(StridedCopyDesc) bytes and untouched
// until the stream has run the launch.
Status LaunchStridedCopies(const StridedCopyDesc* descs, size_t count, uint8_t* pinned,
                           uint8_t* device_scratch, cudaStream_t stream);

}  // namespace zarrd::cuda
