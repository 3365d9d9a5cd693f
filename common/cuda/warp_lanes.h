// The 32 lanes of a warp as the decoding cores' Lanes (common/decode/lanes.h): the lanes split
// literal and match copies, __syncwarp orders their writes, lane 0's results are shuffled to all,
// and the lanes' checksum shares are reduced.
// On the host (never used there) it behaves as one lane so that the cores' templates compile.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"

namespace zarrd::cuda {

struct WarpLanes {
  uint32_t l = 0;
  ZARRD_HD uint32_t lane() const { return l; }
  ZARRD_HD uint32_t count() const {
#if defined(__CUDA_ARCH__)
    return 32;
#else
    return 1;
#endif
  }
  ZARRD_HD void Sync() const {
#if defined(__CUDA_ARCH__)
    __syncwarp();
#endif
  }
  ZARRD_HD uint32_t Broadcast(uint32_t v) const {
#if defined(__CUDA_ARCH__)
    return __shfl_sync(0xffffffffu, v, 0);
#else
    return v;
#endif
  }
  ZARRD_HD uint32_t Xor(uint32_t v) const {
#if defined(__CUDA_ARCH__)
    return __reduce_xor_sync(0xffffffffu, v);
#else
    return v;
#endif
  }
  ZARRD_HD uint32_t Sum(uint32_t v) const {
#if defined(__CUDA_ARCH__)
    return __reduce_add_sync(0xffffffffu, v);
#else
    return v;
#endif
  }
};

}  // namespace zarrd::cuda
