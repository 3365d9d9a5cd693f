#include "common/cuda/blosc_kernel.h"
#include "common/cuda/cuda_status.h"
#include "common/cuda/warp_lanes.h"
#include "common/decode/blosc1.h"

namespace zarrd::cuda {
namespace {

using decode::Blosc1Header;
using decode::DecodeError;
using decode::DecodeTask;

constexpr uint32_t kWarps = 4;

__global__ void __launch_bounds__(kWarps * 32)
    BloscKernel(DecodeTask* tasks, uint32_t count, uint8_t* scratch, const uint64_t* offsets) {
  __shared__ Blosc1Header header;
  __shared__ uint32_t error;
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (uint32_t t = blockIdx.x; t < count; t += gridDim.x) {
    DecodeTask& task = tasks[t];
    if (threadIdx.x == 0) {
      error = static_cast<uint32_t>(
          decode::ParseBlosc1(task.src, task.src_size, task.dst_size, &header));
    }
    __syncthreads();
    if (error == 0) {
      const WarpLanes lanes{lane};
      for (uint64_t b = warp; b < header.nblocks; b += kWarps) {
        const uint64_t at = b * header.blocksize;
        const DecodeError e = decode::DecodeBlosc1Block(header, task.src, b, task.dst + at,
                                                        scratch + offsets[t] + at, lanes);
        if (e != DecodeError::kOk) {
          if (lane == 0) atomicCAS(&error, 0u, static_cast<uint32_t>(e));
          break;
        }
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      task.error = static_cast<DecodeError>(error);
      task.written = error == 0 ? task.dst_size : 0;
    }
    __syncthreads();  // `header` and `error` are reused by the next task
  }
}

}  // namespace

uint64_t BloscScratchLayout(const std::vector<DecodeTask>& tasks, std::vector<uint64_t>* offsets) {
  offsets->clear();
  uint64_t total = 0;
  for (const DecodeTask& t : tasks) {
    offsets->push_back(total);
    total += (t.dst_size + 15) / 16 * 16;
  }
  return total;
}

Status LaunchBloscDecode(DecodeTask* d_tasks, uint32_t count, uint8_t* d_scratch,
                         const uint64_t* d_scratch_offsets, cudaStream_t stream) {
  if (count == 0) return OkStatus();
  const uint32_t blocks = count < 65535u * 16 ? count : 65535u * 16;
  BloscKernel<<<blocks, kWarps * 32, 0, stream>>>(d_tasks, count, d_scratch, d_scratch_offsets);
  return CudaStatus(cudaGetLastError(), "blosc decode launch");
}

}  // namespace zarrd::cuda
