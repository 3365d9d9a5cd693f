#include <algorithm>

#include "common/cuda/cuda_status.h"
#include "common/cuda/zstd_kernel.h"
#include "common/decode/zstd_decode.h"

namespace zarrd::cuda {
namespace {

// Each warp keeps its tables and sequence batch (read for every literal and sequence) in shared
// memory, about 19 KiB; two warps a block keep the block under the 48 KiB of static shared memory
// and let an SM hold several blocks.
constexpr int kWarpsPerBlock = 2;
constexpr int kThreads = 32 * kWarpsPerBlock;

__global__ void __launch_bounds__(kThreads)
    ZstdDecodeKernel(decode::DecodeTask* tasks, int n, decode::ZstdWorkspace* workspaces,
                     int slots) {
  // Raw storage: shared variables take no constructors.
  __shared__ alignas(8) unsigned char tables[kWarpsPerBlock * sizeof(decode::zstd::ZstdTables)];
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (warp >= slots) return;  // whole warps leave together
  const decode::zstd::Lanes lanes{threadIdx.x % 32, 32};
  auto* own = reinterpret_cast<decode::zstd::ZstdTables*>(tables) + threadIdx.x / 32;
  for (int t = warp; t < n; t += slots) {
    const decode::DecodeTask task = tasks[t];
    uint64_t written = 0;
    const decode::DecodeError e = decode::DecodeZstd(
        task.src, task.src_size, task.dst, task.dst_size, &written, workspaces + warp, own, lanes);
    if (lanes.Leader()) {
      tasks[t].written = written;
      tasks[t].error = e;
    }
    __syncwarp();
  }
}

}  // namespace

Result<decode::ZstdWorkspace*> AllocateZstdWorkspaces(int slots) {
  void* p = nullptr;
  ZARRD_RETURN_IF_ERROR(
      CudaStatus(cudaMalloc(&p, static_cast<size_t>(slots) * sizeof(decode::ZstdWorkspace)),
                 "cudaMalloc of " + std::to_string(slots) + " zstd workspaces"));
  return static_cast<decode::ZstdWorkspace*>(p);
}

void FreeZstdWorkspaces(decode::ZstdWorkspace* workspaces) { cudaFree(workspaces); }

int DefaultZstdSlots() {
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ZstdDecodeKernel, kThreads, 0) !=
          cudaSuccess) {
    return 1024;
  }
  return std::max(1, sms * per_sm * kWarpsPerBlock);
}

Status LaunchZstdDecode(decode::DecodeTask* tasks, int n, decode::ZstdWorkspace* workspaces,
                        int slots, cudaStream_t stream) {
  if (n <= 0) return OkStatus();
  const int warps = std::min(n, slots);
  const int blocks = (warps + kWarpsPerBlock - 1) / kWarpsPerBlock;
  ZstdDecodeKernel<<<blocks, kThreads, 0, stream>>>(tasks, n, workspaces, warps);
  return CudaStatus(cudaGetLastError(), "zstd decode kernel launch");
}

}  // namespace zarrd::cuda
