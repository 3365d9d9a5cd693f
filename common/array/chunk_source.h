// Where a write's input comes from, the mirror of ChunkSink. For each chunk the engine asks the
// source for the input's part of it (Placement's result side is the input) and encodes the
// chunk. The host source copies from host memory; the GPU source (common/cuda/) brings each
// chunk's part down through pinned staging, so a device input is never copied whole.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/index/chunk_selection.h"
#include "common/util/status.h"
#include "common/util/strided_copy.h"

namespace zarrd {

class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // Bytes of input: the selection's elements, laid out as a read's result.
  virtual size_t nbytes() const = 0;
  // Copies the input elements of `p` into `chunk` (at p.chunk_offset, p.chunk_strides).
  virtual Status Gather(const Placement& p, uint8_t* chunk) = 0;
};

class HostSource final : public ChunkSource {
 public:
  HostSource(const uint8_t* in, size_t nbytes, size_t elem_size)
      : in_(in), nbytes_(nbytes), elem_size_(elem_size) {}
  size_t nbytes() const override { return nbytes_; }
  Status Gather(const Placement& p, uint8_t* chunk) override {
    StridedCopy(in_ + p.result_offset, p.result_strides.data(), chunk + p.chunk_offset,
                p.chunk_strides.data(), p.counts.data(), p.counts.size(), elem_size_);
    return OkStatus();
  }

 private:
  const uint8_t* in_;
  size_t nbytes_, elem_size_;
};

}  // namespace zarrd
