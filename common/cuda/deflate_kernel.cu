#include "common/cuda/cuda_status.h"
#include "common/cuda/deflate_kernel.h"
#include "common/cuda/warp_lanes.h"
#include "common/decode/deflate.h"

namespace zarrd::cuda {
namespace {

using decode::DecodeTask;

// A warp a stream: lane 0 parses into a window in shared memory, the lanes move the window's bytes
// to the output and split the checksum. One warp a block, so that a batch's streams spread over
// every SM. The window is 16 KiB (matches reaching further read the output): with the tables, 26
// KiB a block, eight blocks an SM, so 1024 streams run at once on an H100; a 32 KiB window (five
// blocks an SM) was measured slower (bench/RESULTS.md, session 23).
constexpr uint32_t kThreads = 32;
constexpr uint32_t kWindowBytes = 16384;

__global__ void __launch_bounds__(kThreads)
    DeflateKernel(DecodeTask* tasks, DeflateWrapper wrapper) {
  __shared__ decode::InflateWorkspace ws;
  __shared__ uint8_t window_bytes[kWindowBytes];
  const decode::InflateWindow window{window_bytes, kWindowBytes};
  DecodeTask& task = tasks[blockIdx.x];
  const WarpLanes lanes{threadIdx.x};
  uint64_t written = 0;
  const decode::DecodeError e =
      wrapper == DeflateWrapper::kGzip
          ? decode::DecodeGzip(task.src, task.src_size, task.dst, task.dst_size, &written, &ws,
                               lanes, window)
          : decode::DecodeZlib(task.src, task.src_size, task.dst, task.dst_size, &written, &ws,
                               lanes, window);
  if (threadIdx.x == 0) {
    task.error = e;
    task.written = written;
  }
}

}  // namespace

Status LaunchDeflateDecode(DecodeTask* d_tasks, uint32_t count, DeflateWrapper wrapper,
                           cudaStream_t stream) {
  if (count == 0) return OkStatus();
  DeflateKernel<<<count, kThreads, 0, stream>>>(d_tasks, wrapper);
  return CudaStatus(cudaGetLastError(), "deflate decode launch");
}

}  // namespace zarrd::cuda
