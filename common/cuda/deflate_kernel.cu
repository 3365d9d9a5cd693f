#include "common/cuda/cuda_status.h"
#include "common/cuda/deflate_kernel.h"
#include "common/decode/deflate.h"

namespace zarrd::cuda {
namespace {

using decode::DecodeTask;

constexpr uint32_t kThreads = 64;

__global__ void __launch_bounds__(kThreads)
    DeflateKernel(DecodeTask* tasks, uint32_t count, DeflateWrapper wrapper) {
  const uint64_t t = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= count) return;
  DecodeTask& task = tasks[t];
  decode::InflateWorkspace ws;
  uint64_t written = 0;
  task.error =
      wrapper == DeflateWrapper::kGzip
          ? decode::DecodeGzip(task.src, task.src_size, task.dst, task.dst_size, &written, &ws)
          : decode::DecodeZlib(task.src, task.src_size, task.dst, task.dst_size, &written, &ws);
  task.written = written;
}

}  // namespace

Status LaunchDeflateDecode(DecodeTask* d_tasks, uint32_t count, DeflateWrapper wrapper,
                           cudaStream_t stream) {
  if (count == 0) return OkStatus();
  const uint32_t blocks = (count + kThreads - 1) / kThreads;
  DeflateKernel<<<blocks, kThreads, 0, stream>>>(d_tasks, count, wrapper);
  return CudaStatus(cudaGetLastError(), "deflate decode launch");
}

}  // namespace zarrd::cuda
