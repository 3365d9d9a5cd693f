#include "common/cuda/device_sink.h"

#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {

void DeviceSink::Start(size_t num_chunks) {
  deferred_.resize(num_chunks);
  keepalive_.resize(num_chunks);
  num_deferred_ = 0;
}

Result<ChunkSink::Buffer> DeviceSink::Begin(const Placement& p, size_t chunk_bytes) {
  ZARRD_ASSIGN_OR_RETURN(StagingSlot * slot, staging_.Acquire(chunk_bytes));
  return Buffer{slot->pinned, slot};
}

Status DeviceSink::Commit(const Placement& p, const Buffer& buffer) {
  auto* slot = static_cast<StagingSlot*>(buffer.token);
  Status s;
  if (p.contiguous) {
    s = CudaStatus(cudaMemcpyAsync(out_ + p.result_offset, slot->pinned, slot->used_bytes,
                                   cudaMemcpyHostToDevice, slot->stream),
                   "chunk upload");
  } else {
    s = CudaStatus(cudaMemcpyAsync(slot->scratch, slot->pinned, slot->used_bytes,
                                   cudaMemcpyHostToDevice, slot->stream),
                   "chunk upload");
    if (s.ok()) {
      auto desc = MakeCopyDesc(slot->scratch + p.chunk_offset, p.chunk_strides.data(),
                               out_ + p.result_offset, p.result_strides.data(), p.counts.data(),
                               p.counts.size(), elem_size_);
      s = desc.ok() ? LaunchStridedCopy(*desc, slot->stream) : desc.status();
    }
  }
  {
    std::lock_guard lock(mutex_);
    used_.insert(slot);
  }
  Status released = staging_.Release(slot, true);
  return s.ok() ? released : s;
}

void DeviceSink::Abandon(const Buffer& buffer) {
  (void)staging_.Release(static_cast<StagingSlot*>(buffer.token), false);
}

void DeviceSink::Defer(const StridedCopyDesc& desc, std::shared_ptr<const void> keepalive) {
  const size_t i = num_deferred_.fetch_add(1, std::memory_order_relaxed);
  deferred_[i] = desc;
  keepalive_[i] = std::move(keepalive);
}

Status DeviceSink::Fill(const Placement& p, const uint8_t* fill_value, size_t elem_size) {
  ZARRD_ASSIGN_OR_RETURN(
      auto desc, MakeFillDesc(out_ + p.result_offset, p.result_strides.data(), p.counts.data(),
                              p.counts.size(), fill_value, elem_size));
  Defer(desc, nullptr);
  return OkStatus();
}

Status DeviceSink::CommitDevice(const Placement& p, const DeviceValue& value) {
  ZARRD_ASSIGN_OR_RETURN(
      auto desc,
      MakeCopyDesc(static_cast<const uint8_t*>(value.data) + p.chunk_offset, p.chunk_strides.data(),
                   out_ + p.result_offset, p.result_strides.data(), p.counts.data(),
                   p.counts.size(), elem_size_));
  Defer(desc, value.keepalive);
  return OkStatus();
}

Status DeviceSink::Finish() {
  Status status;
  deferred_.resize(num_deferred_);
  if (!deferred_.empty()) {
    auto slot = staging_.Acquire(deferred_.size() * sizeof(StridedCopyDesc));
    if (!slot.ok()) {
      status = slot.status();
    } else {
      status = LaunchStridedCopies(deferred_, (*slot)->pinned, (*slot)->scratch, (*slot)->stream);
      used_.insert(*slot);
      Status released = staging_.Release(*slot, true);
      if (status.ok()) status = released;
    }
  }
  for (StagingSlot* slot : used_) {
    Status s = CudaStatus(cudaEventSynchronize(slot->done), "device result");
    if (status.ok()) status = s;
  }
  used_.clear();
  deferred_.clear();
  keepalive_.clear();
  return status;
}

}  // namespace zarrd::cuda
