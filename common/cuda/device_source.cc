#include "common/cuda/device_source.h"

#include "common/cuda/copy_kernels.h"
#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {

Status DeviceSource::Gather(const Placement& p, uint8_t* chunk) {
  const size_t rank = p.counts.size();
  size_t part_bytes = elem_size_;
  for (int64_t c : p.counts) part_bytes *= static_cast<size_t>(c);
  if (part_bytes == 0) return OkStatus();
  ZARRD_ASSIGN_OR_RETURN(StagingSlot * slot, staging_.Acquire(part_bytes));
  // The part, packed in C order: a kernel gathers it from the input unless it is one run.
  const std::vector<int64_t> packed = COrderStrides(p.counts, elem_size_);
  Status s;
  if (p.contiguous) {
    s = CudaStatus(cudaMemcpyAsync(slot->pinned, in_ + p.result_offset, part_bytes,
                                   cudaMemcpyDeviceToHost, slot->stream),
                   "input copy from the GPU");
  } else {
    auto desc = MakeCopyDesc(in_ + p.result_offset, p.result_strides.data(), slot->scratch,
                             packed.data(), p.counts.data(), rank, elem_size_);
    s = desc.ok() ? LaunchStridedCopy(*desc, slot->stream) : desc.status();
    if (s.ok()) {
      s = CudaStatus(cudaMemcpyAsync(slot->pinned, slot->scratch, part_bytes,
                                     cudaMemcpyDeviceToHost, slot->stream),
                     "input copy from the GPU");
    }
  }
  if (s.ok()) s = CudaStatus(cudaStreamSynchronize(slot->stream), "input copy from the GPU");
  if (s.ok()) {
    StridedCopy(slot->pinned, packed.data(), chunk + p.chunk_offset, p.chunk_strides.data(),
                p.counts.data(), rank, elem_size_);
  }
  Status released = staging_.Release(slot, false);
  return s.ok() ? released : s;
}

}  // namespace zarrd::cuda
