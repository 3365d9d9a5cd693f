#include "common/cuda/staging.h"

#include <bit>

#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {

StagingPool::~StagingPool() {
  cudaSetDevice(device_);
  for (auto& s : slots_) {
    cudaStreamSynchronize(s->stream);
    cudaFreeHost(s->pinned);
    cudaFree(s->scratch);
    cudaEventDestroy(s->done);
    cudaStreamDestroy(s->stream);
  }
}

Result<StagingSlot*> StagingPool::Acquire(size_t nbytes) {
  ZARRD_RETURN_IF_ERROR(UseDevice(device_));
  StagingSlot* slot = nullptr;
  {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !free_.empty() || slots_.size() < max_slots_; });
    if (!free_.empty()) {
      slot = free_.front();
      free_.pop_front();
    } else {
      auto created = std::make_unique<StagingSlot>();
      Status s = CudaStatus(cudaStreamCreateWithFlags(&created->stream, cudaStreamNonBlocking),
                            "staging stream");
      if (s.ok()) {
        s = CudaStatus(cudaEventCreateWithFlags(&created->done, cudaEventDisableTiming),
                       "staging event");
      }
      if (!s.ok()) return s;
      ZARRD_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(created->done, created->stream), "event"));
      slot = created.get();
      slots_.push_back(std::move(created));
    }
  }
  Status s = CudaStatus(cudaEventSynchronize(slot->done), "staging slot's previous upload");
  if (s.ok() && (slot->pinned_bytes < nbytes || slot->scratch_bytes < nbytes))
    s = Grow(slot, nbytes);
  if (!s.ok()) {
    (void)Release(slot, false);
    return s;
  }
  return slot;
}

Status StagingPool::Grow(StagingSlot* slot, size_t nbytes) {
  const size_t size = std::bit_ceil(std::max<size_t>(nbytes, 64 << 10));
  if (slot->pinned_bytes < nbytes) {
    cudaFreeHost(slot->pinned);
    slot->pinned = nullptr;
    slot->pinned_bytes = 0;
    void* p = nullptr;
    ZARRD_RETURN_IF_ERROR(
        CudaStatus(cudaHostAlloc(&p, size, cudaHostAllocDefault),
                   "pinned staging buffer of " + std::to_string(size) + " bytes"));
    slot->pinned = static_cast<uint8_t*>(p);
    slot->pinned_bytes = size;
  }
  if (slot->scratch_bytes < nbytes) {
    cudaFree(slot->scratch);
    slot->scratch = nullptr;
    slot->scratch_bytes = 0;
    void* p = nullptr;
    ZARRD_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(&p, size), "device staging buffer of " + std::to_string(size) + " bytes"));
    slot->scratch = static_cast<uint8_t*>(p);
    slot->scratch_bytes = size;
  }
  return OkStatus();
}

Status StagingPool::Release(StagingSlot* slot, bool queued_work) {
  Status s = queued_work ? CudaStatus(cudaEventRecord(slot->done, slot->stream), "staging event")
                         : OkStatus();
  {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
  }
  available_.notify_one();
  return s;
}

uint64_t StagingPool::pinned_bytes() const {
  std::lock_guard lock(mutex_);
  uint64_t total = 0;
  for (const auto& s : slots_) total += s->pinned_bytes;
  return total;
}

}  // namespace zarrd::cuda
