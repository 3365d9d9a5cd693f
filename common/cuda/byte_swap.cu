#include <algorithm>

#include "common/cuda/byte_swap.h"
#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {
namespace {

template <typename T>
__global__ void ByteSwapKernel(T* data, uint64_t count) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    T v = data[i];
    if constexpr (sizeof(T) == 2) v = static_cast<T>(__byte_perm(v, 0, 0x3201) & 0xffff);
    if constexpr (sizeof(T) == 4) v = __byte_perm(v, 0, 0x0123);
    if constexpr (sizeof(T) == 8) {
      const uint32_t lo = static_cast<uint32_t>(v), hi = static_cast<uint32_t>(v >> 32);
      v = (uint64_t{__byte_perm(lo, 0, 0x0123)} << 32) | __byte_perm(hi, 0, 0x0123);
    }
    data[i] = v;
  }
}

template <typename T>
Status Launch(uint8_t* data, uint64_t nbytes, cudaStream_t stream) {
  const uint64_t count = nbytes / sizeof(T);
  if (count == 0) return OkStatus();
  constexpr unsigned kThreads = 256;
  const unsigned blocks =
      static_cast<unsigned>(std::min<uint64_t>((count + kThreads - 1) / kThreads, 4096));
  ByteSwapKernel<T><<<blocks, kThreads, 0, stream>>>(reinterpret_cast<T*>(data), count);
  return CudaStatus(cudaGetLastError(), "byte swap kernel launch");
}

}  // namespace

Status LaunchByteSwap(uint8_t* data, uint64_t nbytes, uint32_t unit, cudaStream_t stream) {
  switch (unit) {
    case 1:
      return OkStatus();
    case 2:
      return Launch<uint16_t>(data, nbytes, stream);
    case 4:
      return Launch<uint32_t>(data, nbytes, stream);
    case 8:
      return Launch<uint64_t>(data, nbytes, stream);
  }
  return Internal("byte swap of " + std::to_string(unit) + "-byte elements");
}

}  // namespace zarrd::cuda
