// Where a read puts decoded chunks. The engine decodes each chunk into the buffer `Begin` hands
// out and gives it back to `Commit`, which places it in the result; chunks that are absent go to
// `Fill`. The host sink writes into a result in host memory; the GPU sink (common/cuda/) stages
// chunks in pinned memory and places them on the device, overlapping decode and upload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/codec/gpu_decode_plan.h"
#include "common/index/chunk_selection.h"
#include "common/kvstore/device_resident_store.h"
#include "common/util/status.h"

namespace zarrd {

class ChunkSink {
 public:
  struct Buffer {
    uint8_t* data = nullptr;
    void* token = nullptr;  // the sink's own handle for this buffer
  };

  virtual ~ChunkSink() = default;
  // Before the chunks: how many the read hands over at most (a sink may size its bookkeeping).
  virtual void Start(size_t num_chunks) {}
  // A buffer for one decoded chunk of `chunk_bytes` that goes to placement `p`.
  virtual Result<Buffer> Begin(const Placement& p, size_t chunk_bytes) = 0;
  // `buffer` (from Begin) holds the decoded chunk.
  virtual Status Commit(const Placement& p, const Buffer& buffer) = 0;
  // Decoding into `buffer` failed: give it back unused.
  virtual void Abandon(const Buffer& buffer) {}
  // The selected part of an absent chunk reads as the fill value.
  virtual Status Fill(const Placement& p, const uint8_t* fill_value, size_t elem_size) = 0;

  // Whether the store reads raw chunks (no codec but the little-endian bytes codec) straight into
  // Begin's buffer. Otherwise they come through a private buffer and are copied in.
  virtual bool reads_raw_chunks_into_buffers() const { return true; }

  // Sinks that place on the GPU take chunks that already live in GPU memory of `device` (a
  // device-resident store) without a trip through the host.
  virtual bool accepts_device_values(int device) const { return false; }
  virtual Status CommitDevice(const Placement& p, const DeviceValue& value) {
    return Unimplemented("this result is not in GPU memory");
  }

  // Sinks that decode on the GPU take chunks still encoded, for arrays whose chain PlanGpuChain
  // accepts. Asked once per read, after Start: whether this read (whose chain's compressor is
  // `kind`) hands them over.
  virtual bool accepts_encoded(CompressorFamily kind) const { return false; }
  struct EncodedChunk {
    GpuCodec codec = GpuCodec::kZstd;
    uint32_t swap_unit = 1;  // > 1: big-endian elements of this many bytes
    bool crc32c = false;     // the chunk ends in the crc32c of the bytes before it
    size_t decoded_bytes = 0;
    // "array 'a' chunk 'k'": decoding fails after the hand-over, and Finish names the chunk.
    std::string where;
  };
  // Whether handing an encoded chunk over now would wait for the GPU (its batches all decoding):
  // the engine then decodes the chunk itself, so that the CPUs add their rate to the GPU's.
  virtual bool encoded_would_wait() const { return false; }
  // Copies `encoded` (the engine reuses its buffer), then decodes and places it. Decoding errors
  // come from Finish: DATA_LOSS for corrupt chunks. RESOURCE_EXHAUSTED with encoded_would_wait()
  // true after it: the GPU had no memory for the chunk, and the engine decodes it itself.
  virtual Status CommitEncoded(const Placement& p, ByteView encoded, EncodedChunk chunk) {
    return Unimplemented("this sink takes no encoded chunks");
  }

  // The same for an encoded chunk that lives in GPU memory (a device-resident store): the GPU
  // decodes it where it is (or, as above, the engine reads it from the store and decodes it).
  // Only sinks that accept both device values and encoded chunks.
  virtual Status CommitEncodedDevice(const Placement& p, const DeviceValue& encoded,
                                     EncodedChunk chunk) {
    return Unimplemented("this sink takes no encoded chunks in GPU memory");
  }

  // A thread that handed over chunks of this read hands over no more (it may be about to work on
  // another read): a sink that gathers chunks per thread sends them on.
  virtual Status LeaveThread() { return OkStatus(); }

  // Called once after every chunk was handed over (also after an error): returns when the
  // result is complete.
  virtual Status Finish() { return OkStatus(); }
};

}  // namespace zarrd
