// The encoded chunks of one read on their way to the GPU (DeviceSink::CommitEncoded): every
// decoding thread adds its chunks to one shared EncodedBatch, which launches when it holds
// EncodedBatch::kMaxChunks chunks or kDecodedBytes of output, when a chunk of another kind (codec,
// size) comes, or at Finish. A launch is queued on its slot's stream with no host wait; the next
// batch fills meanwhile, and up to StagingPool::kBatchSlots batches of all reads are in flight.
// A read holds at most one batch slot, and none while it waits for one. Finish waits for the
// decoding and fails with DATA_LOSS naming the first chunk that did not decode.
//
// Memory, per device: the batch pool's 4 slots, each at most about 320 MiB pinned and 830 MiB on
// the device (EncodedBatch), grown on first use and kept; a read's decode records (pinned, a
// DecodeTask a chunk).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/array/chunk_sink.h"
#include "common/cuda/encoded_batch.h"
#include "common/cuda/staging.h"

namespace zarrd::cuda {

class DecodeBatcher {
 public:
  // `staging` lends the records and its batch_pool() the batch slots; decoded chunks go to
  // `out` (device memory) with `elem_size`-byte elements.
  DecodeBatcher(StagingPool& staging, uint8_t* out, size_t elem_size)
      : staging_(staging), out_(out), elem_size_(elem_size) {}
  ~DecodeBatcher();
  DecodeBatcher(const DecodeBatcher&) = delete;
  DecodeBatcher& operator=(const DecodeBatcher&) = delete;

  // A read of at most `num_chunks` chunks begins.
  void Start(size_t num_chunks);
  // Whether a chunk handed over now would wait for the GPU: no batch is open and no batch slot is
  // idle.
  bool WouldWait() const;
  // Whether opening a batch of this read failed for want of memory (pinned or on the device):
  // every Add after that would fail the same way.
  bool out_of_memory() const { return out_of_memory_.load(std::memory_order_relaxed); }
  // Copies `encoded` into the open batch (the caller may reuse its buffer at once). Fails with
  // RESOURCE_EXHAUSTED, and out_of_memory() turns true, when no batch could be opened for it.
  Status Add(const Placement& p, ByteView encoded, ChunkSink::EncodedChunk chunk);
  // Adds a chunk already in GPU memory of this device: decoded from where it is, kept alive
  // until Finish.
  Status AddDevice(const Placement& p, const DeviceValue& encoded, ChunkSink::EncodedChunk chunk);
  // Launches what is left, waits for every batch of the read and checks the chunks' results.
  // The batcher is empty after, ready for another read.
  Status Finish();

 private:
  // Add and AddDevice: `device` is null for host chunks.
  Status AddChunk(const Placement& p, ByteView encoded, const DeviceValue* device,
                  ChunkSink::EncodedChunk chunk);
  // Marks the open batch closed and launches it if no writer is left (mutex_ held).
  Status Close();
  Status Launch();
  // Records, and the open batch, for a chunk (mutex_ held).
  Status OpenBatch(const ChunkSink::EncodedChunk& chunk, size_t upload_bytes);
  Status CheckDecoded() const;

  StagingPool& staging_;
  uint8_t* out_;
  size_t elem_size_;
  size_t num_chunks_ = 0;
  std::mutex mutex_;
  std::condition_variable launched_;  // the closed batch launched: another may open
  // The batch being filled, or closed and waiting for the threads still copying chunks in (the
  // last one launches it); the read's next batch opens once it has launched.
  EncodedBatch batch_;
  size_t writers_ = 0;
  bool closed_ = false;
  std::atomic<bool> accepting_{false};  // a batch is open and not closed
  std::atomic<bool> out_of_memory_{false};
  size_t first_record_ = 0;  // of the batch's first chunk
  std::set<StagingSlot*> used_;
  // A record per chunk, in the order chunks were added, filled by the kernels; wheres_ and
  // codecs_ name them.
  uint8_t* records_ = nullptr;
  size_t records_bytes_ = 0;
  size_t num_records_ = 0;
  std::vector<std::string> wheres_;
  std::vector<GpuCodec> codecs_;
  std::vector<std::shared_ptr<const void>> held_;  // the chunks decoded from GPU memory
};

// Makes every batch slot of `staging` as large as the largest batches need (of 1 MiB chunks of
// blosc, then of zstd), so that no read waits while they are made: hundreds of milliseconds for
// the first large reads of a process otherwise.
Status PrewarmBatchSlots(StagingPool& staging);

}  // namespace zarrd::cuda
