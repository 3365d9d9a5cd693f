#include "common/cuda/staging.h"

#include <bit>

#include "common/cuda/cuda_status.h"
#include "common/cuda/zstd_kernel.h"

namespace zarrd::cuda {
namespace {

// Buffers grow to powers of two, and past 64 MiB to multiples of it (a batch slot of 300 MiB
// would otherwise take 512).
size_t GrownSize(size_t nbytes) {
  constexpr size_t kStep = size_t{64} << 20;
  if (nbytes <= kStep) return std::bit_ceil(std::max<size_t>(nbytes, 64 << 10));
  return (nbytes + kStep - 1) / kStep * kStep;
}

// Whether the slot's queued work has finished. A "not ready" answer is recorded as the thread's
// last error, which the next kernel launch's check would report: it is cleared.
bool Idle(const StagingSlot* slot) {
  const cudaError_t e = cudaEventQuery(slot->done);
  if (e == cudaErrorNotReady) (void)cudaGetLastError();
  return e == cudaSuccess;
}

}  // namespace

StagingPool::StagingPool(int device, size_t max_slots, size_t batch_slots)
    : device_(device), max_slots_(max_slots) {
  if (batch_slots > 0) {
    batch_pool_ = std::make_unique<StagingPool>(device, batch_slots, 0);
    batch_pool_->blocking_waits_ = true;
  }
}

StagingPool::~StagingPool() {
  cudaSetDevice(device_);
  for (auto& s : slots_) {
    cudaStreamSynchronize(s->stream);
    cudaFreeHost(s->pinned);
    cudaFree(s->scratch);
    cudaEventDestroy(s->done);
    cudaStreamDestroy(s->stream);
    if (s->zstd_scratch.data) FreeZstdScratch(s->zstd_scratch);
  }
  for (uint8_t* r : all_records_) cudaFreeHost(r);
}

Result<StagingSlot*> StagingPool::Acquire(size_t pinned_bytes, size_t scratch_bytes) {
  ZARRD_RETURN_IF_ERROR(UseDevice(device_));
  StagingSlot* slot = nullptr;
  {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !free_.empty() || slots_.size() < max_slots_; });
    // A free slot whose work is still queued would make this caller wait for it: below the
    // limit, a new slot is made instead (else each decode batch of a read took the slot the
    // last one had just given back and waited for that batch's decoding).
    if (!free_.empty() && (slots_.size() >= max_slots_ || Idle(free_.front()))) {
      slot = free_.front();
      free_.pop_front();
    } else {
      auto created = std::make_unique<StagingSlot>();
      Status s = CudaStatus(cudaStreamCreateWithFlags(&created->stream, cudaStreamNonBlocking),
                            "staging stream");
      if (s.ok()) {
        const unsigned flags =
            cudaEventDisableTiming | (blocking_waits_ ? cudaEventBlockingSync : 0);
        s = CudaStatus(cudaEventCreateWithFlags(&created->done, flags), "staging event");
      }
      if (!s.ok()) return s;
      ZARRD_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(created->done, created->stream), "event"));
      slot = created.get();
      slots_.push_back(std::move(created));
    }
  }
  Status s = CudaStatus(cudaEventSynchronize(slot->done), "staging slot's previous upload");
  if (s.ok() && (slot->pinned_bytes < pinned_bytes || slot->scratch_bytes < scratch_bytes))
    s = Grow(slot, pinned_bytes, scratch_bytes);
  if (!s.ok()) {
    (void)Release(slot, false);
    return s;
  }
  return slot;
}

bool StagingPool::HasIdleSlot() const {
  std::lock_guard lock(mutex_);
  return slots_.size() < max_slots_ || (!free_.empty() && Idle(free_.front()));
}

Status StagingPool::Grow(StagingSlot* slot, size_t pinned_bytes, size_t scratch_bytes) {
  if (slot->pinned_bytes < pinned_bytes) {
    const size_t size = GrownSize(pinned_bytes);
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
  if (slot->scratch_bytes < scratch_bytes) {
    const size_t size = GrownSize(scratch_bytes);
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

size_t StagingPool::slots() const {
  std::lock_guard lock(mutex_);
  return slots_.size();
}

uint64_t StagingPool::pinned_bytes() const {
  std::lock_guard lock(mutex_);
  uint64_t total = 0;
  for (const auto& s : slots_) total += s->pinned_bytes;
  return total;
}

Result<uint8_t*> StagingPool::AcquireRecords(size_t nbytes) {
  const size_t size = std::bit_ceil(std::max<size_t>(nbytes, 4096));
  {
    std::lock_guard lock(mutex_);
    auto it = free_records_.find(size);
    if (it != free_records_.end()) {
      uint8_t* r = it->second;
      free_records_.erase(it);
      return r;
    }
  }
  ZARRD_RETURN_IF_ERROR(UseDevice(device_));
  void* p = nullptr;
  ZARRD_RETURN_IF_ERROR(CudaStatus(cudaHostAlloc(&p, size, cudaHostAllocDefault),
                                   "pinned result records of " + std::to_string(size) + " bytes"));
  std::lock_guard lock(mutex_);
  all_records_.push_back(static_cast<uint8_t*>(p));
  return static_cast<uint8_t*>(p);
}

void StagingPool::ReleaseRecords(uint8_t* records, size_t nbytes) {
  if (records == nullptr) return;
  std::lock_guard lock(mutex_);
  free_records_.emplace(std::bit_ceil(std::max<size_t>(nbytes, 4096)), records);
}

}  // namespace zarrd::cuda
