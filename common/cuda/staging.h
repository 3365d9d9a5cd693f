// Pinned host buffers for uploads, each with a device scratch buffer, a stream and an event.
// A read decodes a chunk into a slot's pinned buffer, queues its upload on the slot's stream and
// hands the slot back at once; the next user of the slot waits for that upload first. With more
// slots than decoding threads, decode and upload overlap.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common/cuda/zstd_kernel.h"
#include "common/util/status.h"

namespace zarrd::cuda {

struct StagingSlot {
  uint8_t* pinned = nullptr;
  size_t pinned_bytes = 0;
  uint8_t* scratch = nullptr;  // device memory
  size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;  // recorded after the slot's last queued work
  // Device scratch of the zstd kernels for decoding on this slot's stream (EncodedBatch).
  ZstdScratch zstd_scratch;
};

class StagingPool {
 public:
  // Decode batches of up to this many slots are in flight on a device at once (DecodeBatcher):
  // one filling while the others upload and decode.
  static constexpr size_t kBatchSlots = 4;

  StagingPool(int device, size_t max_slots, size_t batch_slots = kBatchSlots);
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // A slot whose buffers hold `nbytes` and whose earlier work has finished: the oldest free one
  // when its work is done or the pool is at its limit, else a new one; waits while all slots are
  // taken.
  Result<StagingSlot*> Acquire(size_t nbytes) { return Acquire(nbytes, nbytes); }
  Result<StagingSlot*> Acquire(size_t pinned_bytes, size_t scratch_bytes);
  // Whether Acquire would return without waiting for queued work.
  bool HasIdleSlot() const;
  // After queuing work on slot->stream: records slot->done and returns the slot.
  Status Release(StagingSlot* slot, bool queued_work);
  int device() const { return device_; }
  size_t slots() const;
  size_t max_slots() const { return max_slots_; }
  uint64_t pinned_bytes() const;

  // Pinned buffers of at least `nbytes` that the GPU copies small results into (a read's decode
  // statuses), kept for reuse: freeing pinned memory waits for the whole device.
  Result<uint8_t*> AcquireRecords(size_t nbytes);
  void ReleaseRecords(uint8_t* records, size_t nbytes);

  // The slots of encoded chunk batches: few and large (hundreds of MiB), kept apart so that
  // they never grow every upload slot to a batch's size.
  StagingPool& batch_pool() { return batch_pool_ ? *batch_pool_ : *this; }

 private:
  Status Grow(StagingSlot* slot, size_t pinned_bytes, size_t scratch_bytes);
  const int device_;
  const size_t max_slots_;
  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<StagingSlot>> slots_;
  std::deque<StagingSlot*> free_;                 // oldest released first: most likely finished
  std::multimap<size_t, uint8_t*> free_records_;  // by size (powers of two)
  std::vector<uint8_t*> all_records_;
  std::unique_ptr<StagingPool> batch_pool_;  // none when batch_slots is 0: this pool
  // Waits for a slot's work block the thread instead of spinning (the batch pool's, which last
  // a kernel's run, up to a hundred milliseconds, would otherwise hold a core each).
  bool blocking_waits_ = false;
};

}  // namespace zarrd::cuda
