#include <algorithm>

#include "common/cuda/blosc_kernel.h"
#include "common/cuda/cuda_status.h"
#include "common/cuda/warp_lanes.h"
#include "common/decode/blosc1.h"
#include "common/decode/zstd_decode.h"

namespace zarrd::cuda {
namespace {

using decode::Blosc1Header;
using decode::DecodeError;
using decode::DecodeTask;

constexpr uint32_t kWarps = 4;
// Launches with zstd workspaces run this many blocks, whose warps each hold a workspace: 2 an SM
// of an H100 or H200. A constant, so that the workspaces allocated on one thread fit the launch
// of another whatever device each has current.
constexpr uint32_t kZstdBlocks = 264;

// The zstd seam of the blosc core (blosc1.h): a split decoded by zstd_decode.h's frame decoder
// on the whole warp, with the warp's workspace; without one, kUnsupported.
struct WarpZstd {
  decode::ZstdWorkspace* ws;
  uint32_t lane;
  __device__ DecodeError operator()(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                    uint64_t dst_size, uint64_t* written) const {
    if (ws == nullptr) return DecodeError::kUnsupported;
    return decode::DecodeZstd(src, src_size, dst, dst_size, written, ws,
                              decode::zstd::Lanes{lane, 32});
  }
};

__global__ void __launch_bounds__(kWarps * 32)
    BloscKernel(DecodeTask* tasks, uint32_t count, uint8_t* scratch, const uint64_t* offsets,
                decode::ZstdWorkspace* workspaces) {
  __shared__ Blosc1Header header;
  __shared__ uint32_t error;
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const WarpZstd zstd{workspaces ? workspaces + blockIdx.x * kWarps + warp : nullptr, lane};
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
                                                        scratch + offsets[t] + at, lanes, zstd);
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

uint64_t BloscZstdWorkspaceBytes() {
  return uint64_t{kZstdBlocks} * kWarps * sizeof(decode::ZstdWorkspace);
}

Status LaunchBloscDecode(DecodeTask* d_tasks, uint32_t count, uint8_t* d_scratch,
                         const uint64_t* d_scratch_offsets, void* d_zstd_workspaces,
                         cudaStream_t stream) {
  if (count == 0) return OkStatus();
  const uint32_t most = d_zstd_workspaces ? kZstdBlocks : 65535u * 16;
  BloscKernel<<<std::min(count, most), kWarps * 32, 0, stream>>>(
      d_tasks, count, d_scratch, d_scratch_offsets,
      static_cast<decode::ZstdWorkspace*>(d_zstd_workspaces));
  return CudaStatus(cudaGetLastError(), "blosc decode launch");
}

}  // namespace zarrd::cuda
