#include "common/cuda/crc32c_kernel.h"
#include "common/cuda/cuda_status.h"
#include "common/decode/crc32c.h"

namespace zarrd::cuda {
namespace {

constexpr uint32_t kThreads = 256;

// Thread i takes the i-th of kThreads equal pieces of the chunk (Crc32cPieceShare).
__global__ void __launch_bounds__(kThreads) Crc32cCheckKernel(decode::DecodeTask* tasks) {
  __shared__ decode::Crc32cTables tables;
  __shared__ uint32_t chunk_crc;
  decode::BuildCrc32cTables(&tables, threadIdx.x, kThreads);
  if (threadIdx.x == 0) chunk_crc = 0;
  __syncthreads();
  const decode::DecodeTask task = tasks[blockIdx.x];
  const uint64_t size = task.src_size;
  uint32_t crc = decode::Crc32cPieceShare(tables, task.src, size, kThreads, threadIdx.x);
  for (int d = 16; d > 0; d /= 2) crc ^= __shfl_xor_sync(0xffffffffu, crc, d);
  if (threadIdx.x % 32 == 0) atomicXor(&chunk_crc, crc);
  __syncthreads();
  if (threadIdx.x == 0) {
    const uint8_t* stored = task.src + size;
    const uint32_t want = uint32_t{stored[0]} | uint32_t{stored[1]} << 8 |
                          uint32_t{stored[2]} << 16 | uint32_t{stored[3]} << 24;
    if (~chunk_crc != want) tasks[blockIdx.x].error = decode::DecodeError::kCrc32cMismatch;
  }
}

}  // namespace

Status LaunchCrc32cCheck(decode::DecodeTask* tasks, uint32_t n, cudaStream_t stream) {
  if (n == 0) return OkStatus();
  Crc32cCheckKernel<<<n, kThreads, 0, stream>>>(tasks);
  return CudaStatus(cudaGetLastError(), "crc32c check kernel launch");
}

}  // namespace zarrd::cuda
