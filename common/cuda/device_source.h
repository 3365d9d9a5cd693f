// A ChunkSource whose input lives in GPU memory. Each chunk's part of the input is gathered on
// the device into a staging slot's scratch buffer (a kernel, when the part is not one run of
// the input), copied down to the slot's pinned buffer and placed in the chunk, on the calling
// thread: the chunks of a write come down in parallel while others compress, and the input is
// never copied to the host whole.
#pragma once

#include "common/array/chunk_source.h"
#include "common/cuda/staging.h"

namespace zarrd::cuda {

class DeviceSource final : public ChunkSource {
 public:
  // `in` is device memory of the staging pool's device holding `nbytes` of input.
  DeviceSource(StagingPool& staging, const uint8_t* in, size_t nbytes, size_t elem_size)
      : staging_(staging), in_(in), nbytes_(nbytes), elem_size_(elem_size) {}
  size_t nbytes() const override { return nbytes_; }
  Status Gather(const Placement& p, uint8_t* chunk) override;

 private:
  StagingPool& staging_;
  const uint8_t* in_;
  size_t nbytes_, elem_size_;
};

}  // namespace zarrd::cuda
