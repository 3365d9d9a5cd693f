#include "common/cuda/host_copy.h"

#include <algorithm>
#include <cstring>

#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {

Status CopyToHost(StagingPool& staging, const uint8_t* src, MutableByteView out, ThreadPool& pool,
                  const std::atomic<bool>* cancelled) {
  const size_t parts = (out.size() + kHostCopyPartBytes - 1) / kHostCopyPartBytes;
  return pool.ParallelFor(
      parts,
      [&](size_t i) -> Status {
        const size_t at = i * kHostCopyPartBytes;
        const size_t n = std::min(kHostCopyPartBytes, out.size() - at);
        ZARRD_ASSIGN_OR_RETURN(StagingSlot * slot, staging.Acquire(n, 0));
        Status s = CudaStatus(
            cudaMemcpyAsync(slot->pinned, src + at, n, cudaMemcpyDeviceToHost, slot->stream),
            "copy of a result from the GPU");
        if (s.ok()) {
          s = CudaStatus(cudaStreamSynchronize(slot->stream), "copy of a result from the GPU");
        }
        if (s.ok()) std::memcpy(out.data() + at, slot->pinned, n);
        Status released = staging.Release(slot, false);
        return s.ok() ? released : s;
      },
      cancelled);
}

}  // namespace zarrd::cuda
