#include "client/device_checksum.h"
#include "common/cuda/cuda_status.h"

namespace zarrd::client {
namespace {

__global__ void ChecksumKernel(const uint8_t* data, uint64_t nbytes, unsigned long long* out) {
  const uint64_t words = (nbytes + 3) / 4;
  unsigned long long sum = 0, weighted = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < words;
       i += uint64_t{gridDim.x} * blockDim.x) {
    uint32_t w = 0;
    if (4 * i + 4 <= nbytes && (reinterpret_cast<uintptr_t>(data) & 3) == 0) {
      w = reinterpret_cast<const uint32_t*>(data)[i];
    } else {
      for (uint64_t b = 0; b < 4 && 4 * i + b < nbytes; ++b) {
        w |= static_cast<uint32_t>(data[4 * i + b]) << (8 * b);
      }
    }
    sum += w;
    weighted += (i + 1) * static_cast<unsigned long long>(w);
  }
  atomicAdd(&out[0], sum);
  atomicAdd(&out[1], weighted);
}

}  // namespace

Result<DeviceChecksum> ChecksumOnDevice(const void* data, uint64_t nbytes, int device) {
  ZARRD_RETURN_IF_ERROR(cuda::UseDevice(device));
  unsigned long long* out = nullptr;
  ZARRD_RETURN_IF_ERROR(cuda::CudaStatus(cudaMalloc(&out, 16), "checksum"));
  cudaMemset(out, 0, 16);
  ChecksumKernel<<<264, 256>>>(static_cast<const uint8_t*>(data), nbytes, out);
  unsigned long long host[2] = {0, 0};
  Status s = cuda::CudaStatus(cudaGetLastError(), "checksum kernel");
  if (s.ok()) s = cuda::CudaStatus(cudaMemcpy(host, out, 16, cudaMemcpyDeviceToHost), "checksum");
  cudaFree(out);
  ZARRD_RETURN_IF_ERROR(s);
  return DeviceChecksum{host[0], host[1]};
}

}  // namespace zarrd::client
