// Encoded chunks of one codec on their way to the GPU (DecodeBatcher): packed into a batch
// staging slot's pinned buffer, uploaded in one transfer with their decode tasks, decoded by one
// batched kernel launch into the slot's device scratch (a decoded chunk each), their crc32c
// checked when the chain has one, byte-swapped when big-endian, placed into the result by strided
// copies; the kernel's per-chunk results are then copied back into pinned records that the batcher
// checks once the work is done.
//
// Several threads fill one batch at once: Reserve (under the batcher's lock) hands out a chunk's
// place, Write (without it) copies the chunk there.
//
// Slot layout, pinned and device alike up to the encoded bytes:
//   copy descriptors | decode tasks | blosc scratch offsets | encoded chunks
// and on the device only, after them: decoded chunks | blosc scratch (blosc only).
#pragma once

#include <string>
#include <vector>

#include "common/codec/gpu_decode_plan.h"
#include "common/cuda/copy_kernels.h"
#include "common/cuda/staging.h"
#include "common/decode/host_device.h"
#include "common/index/chunk_selection.h"

namespace zarrd::cuda {

class EncodedBatch {
 public:
  // A launch holds up to kMaxChunks chunks and kDecodedBytes of
  // decoded output: enough to fill the H200 (132 SMs) with a few batches in flight, where 64
  // chunks and 24 MiB left it nearly idle (bench/RESULTS.md). Its encoded chunks take up to
  // kDecodedBytes and 1/16 more pinned; the device holds those, the decoded chunks, as much
  // again of blosc scratch, and the zstd kernels' scratch (ZstdScratchBytes: about 4.1 bytes a
  // decoded byte).
  static constexpr size_t kMaxChunks = 1024;
  static constexpr size_t kDecodedBytes = size_t{256} << 20;

  bool open() const { return slot_ != nullptr; }
  size_t count() const { return count_; }
  bool full() const { return count_ == capacity_; }
  // Whether a chunk like this joins the open batch.
  bool Takes(GpuCodec codec, uint32_t swap_unit, bool crc32c, size_t encoded_bytes,
             size_t decoded_bytes) const;
  // Takes a staging slot sized for up to `max_chunks` chunks like this one (waits while all
  // slots are taken).
  Status Open(StagingPool& staging, GpuCodec codec, uint32_t swap_unit, bool crc32c,
              size_t encoded_bytes, size_t decoded_bytes, size_t max_chunks);
  // A place for a chunk that Takes accepted, whose decoded bytes go to `out` as `p` says: its
  // index in the batch (Write's `i`). A chunk already in GPU memory gives its address as
  // `device_src`: it is decoded from there, takes no room in the batch and needs no Write.
  Result<size_t> Reserve(size_t encoded_bytes, const uint8_t* device_src, const Placement& p,
                         uint8_t* out, size_t elem_size);
  // Copies the chunk reserved as `i` into the batch; threads write their chunks at once.
  void Write(size_t i, ByteView encoded);
  // Once every reserved chunk is written: queues the upload, decode, swap, placement and the
  // copy of the results into `records` (pinned, count() of them) and gives the slot back,
  // setting `used` to it: the results are in once its `done` event is. The batch is empty
  // after, also on error.
  Status Flush(StagingPool& staging, decode::DecodeTask* records, StagingSlot** used);

  // The value a task's error holds until its kernel writes it.
  static constexpr decode::DecodeError kNotRun = static_cast<decode::DecodeError>(~0u);

 private:
  size_t decoded_stride() const { return (decoded_bytes_ + 255) / 256 * 256; }

  StagingSlot* slot_ = nullptr;
  GpuCodec codec_ = GpuCodec::kZstd;
  uint32_t swap_unit_ = 1;
  bool crc32c_ = false;  // the chunks end in a crc32c, checked after the decode
  size_t decoded_bytes_ = 0;
  size_t capacity_ = 0;     // chunks
  size_t encoded_cap_ = 0;  // bytes
  size_t count_ = 0;
  size_t encoded_used_ = 0;
  size_t tasks_at_ = 0, offsets_at_ = 0, encoded_at_ = 0, decoded_at_ = 0, scratch_at_ = 0;
  std::vector<size_t> encoded_offsets_;  // of each reserved chunk, from encoded_at_
  std::vector<decode::DecodeTask> tasks_;
  std::vector<StridedCopyDesc> descs_;
};

}  // namespace zarrd::cuda
