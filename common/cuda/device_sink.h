// A ChunkSink whose result lives in GPU memory. Each decoding thread fills a staging slot of its
// own with decoded chunks, up to kGroupBytes; a full slot, or the slot of a thread that leaves
// the read, goes up in one transfer on its stream, and a kernel per chunk places them in the
// result, while other chunks decode. A thread holds at most one slot, and none while it waits
// for another. Fills and chunks already in GPU memory are batched into kernels as they come.
// Finish uploads the slots not yet full and returns once the whole result is on the device; or,
// for a sink given a `join` stream, makes that stream wait for the result's work and returns at
// once, and TakeHeld() then gives the GPU memory the queued copies still read.
//
// Reads that the GPU decodes (the policy says so and the chain is one PlanGpuChain accepts) hand
// over chunks still encoded: a DecodeBatcher gathers them from all threads into large batches,
// each decoded by one kernel launch. Finish then waits for the decoding, also on a `join` stream
// (the kernels' verdicts are read on the host), and fails with DATA_LOSS naming the first chunk
// that did not decode.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/array/chunk_sink.h"
#include "common/cuda/copy_kernels.h"
#include "common/cuda/decode_batcher.h"
#include "common/cuda/staging.h"

namespace zarrd::cuda {

class DeviceSink final : public ChunkSink {
 public:
  // `out` is device memory of the staging pool's device, holding the whole result of an array
  // with `elem_size`-byte elements.
  DeviceSink(StagingPool& staging, uint8_t* out, size_t elem_size, cudaStream_t join = nullptr,
             GpuDecodePolicy gpu_decode = {})
      : staging_(staging),
        out_(out),
        elem_size_(elem_size),
        join_(join),
        gpu_decode_(gpu_decode),
        decoder_(staging, out, elem_size) {}
  ~DeviceSink() override;

  void Start(size_t num_chunks) override;
  Result<Buffer> Begin(const Placement& p, size_t chunk_bytes) override;
  Status Commit(const Placement& p, const Buffer& buffer) override;
  void Abandon(const Buffer& buffer) override;
  Status Fill(const Placement& p, const uint8_t* fill_value, size_t elem_size) override;
  // Files read straight into pinned staging made the H200's R2 read to the GPU slower: 28-29
  // GB/s, against 35-38 through a private buffer in the runs around it (bench/RESULTS.md).
  bool reads_raw_chunks_into_buffers() const override { return false; }
  // Values on another GPU come through the host: reading them in place needs peer access.
  bool accepts_device_values(int device) const override { return device == staging_.device(); }
  Status CommitDevice(const Placement& p, const DeviceValue& value) override;
  bool accepts_encoded(CompressorFamily kind) const override {
    return gpu_decode_.Use(num_chunks_, kind);
  }
  // Under auto, while every batch slot is decoding, chunks go to the CPUs instead of waiting; and
  // once the GPU had no memory for a batch of this read, the rest of its chunks do.
  bool encoded_would_wait() const override {
    return gpu_decode_.mode == GpuDecodeMode::kAuto &&
           (decoder_.out_of_memory() || decoder_.WouldWait());
  }
  Status CommitEncoded(const Placement& p, ByteView encoded, EncodedChunk chunk) override;
  Status CommitEncodedDevice(const Placement& p, const DeviceValue& encoded,
                             EncodedChunk chunk) override;
  Status LeaveThread() override;
  Status Finish() override;
  // After Finish on a `join` stream: what must stay alive until that stream passes this point.
  std::vector<std::shared_ptr<const void>> TakeHeld();

  // Chunks go up in transfers of up to this many bytes: 1 MiB transfers moved 0.79-0.86 of the
  // H200's pinned H2D bandwidth, 4 MiB 0.92 (bench/upload_parts).
  static constexpr size_t kGroupBytes = 4 << 20;
  static constexpr size_t kMaxGroup = 16;

 private:
  // A thread's staging slot being filled: chunk i at slot->pinned + i * chunk_bytes.
  struct Group {
    StagingSlot* slot = nullptr;
    size_t chunk_bytes = 0;
    size_t capacity = 0;  // chunks
    size_t count = 0;
    StridedCopyDesc descs[kMaxGroup];
  };
  Group& ThreadGroup();
  // Uploads the group's chunks, queues their placing kernels and gives the slot back.
  Status Flush(Group& g);

  void Defer(const StridedCopyDesc& desc, std::shared_ptr<const void> keepalive);
  // Launches deferred_[b * kBatch, ...) once every one of its descriptors is written.
  void LaunchBatch(size_t b);
  size_t BatchSize(size_t b) const;

  StagingPool& staging_;
  uint8_t* out_;
  size_t elem_size_;
  cudaStream_t join_;
  std::mutex mutex_;
  std::set<StagingSlot*> used_;  // slots with uploads or copies of this result queued
  std::mutex groups_mutex_;
  std::unordered_map<std::thread::id, std::unique_ptr<Group>> groups_;
  Status launch_status_;  // the first failed batch launch
  // Fills and copies from GPU memory: at most one a chunk, so Start sizes them and chunks claim
  // slots with an atomic counter (no lock on the hot path). They launch in batches as the
  // batches fill, so the copies of a read from GPU memory run while later chunks are planned;
  // Finish launches what is left.
  static constexpr size_t kBatch = 64;
  size_t num_chunks_ = 0;
  std::vector<StridedCopyDesc> deferred_;
  std::vector<std::shared_ptr<const void>> keepalive_;
  std::atomic<size_t> num_deferred_{0};
  std::unique_ptr<std::atomic<uint32_t>[]> batch_filled_;
  std::unique_ptr<std::atomic<bool>[]> batch_launched_;
  GpuDecodePolicy gpu_decode_;
  DecodeBatcher decoder_;  // the encoded chunks
};

}  // namespace zarrd::cuda
