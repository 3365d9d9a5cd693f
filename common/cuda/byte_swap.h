// Byte swapping in GPU memory: the big-endian bytes codec after a decode on the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/util/status.h"

namespace zarrd::cuda {

// Swaps `nbytes` / `unit` elements of `unit` (2, 4 or 8) bytes at `data` (device memory,
// `unit`-aligned) in place on `stream`.
Status LaunchByteSwap(uint8_t* data, uint64_t nbytes, uint32_t unit, cudaStream_t stream);

}  // namespace zarrd::cuda
