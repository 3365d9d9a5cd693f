// Codecs whose encoded chunks hold parts that decode alone (sharding_indexed: a shard's inner
// chunks behind an index). A read of some parts reads what locates them once per chunk, then
// only the byte ranges of the parts it needs, each decoded on its own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/codec/codec.h"
#include "common/util/byte_range.h"

namespace zarrd {

// Reads a byte range of one stored chunk into `out`; false when the chunk is absent.
using ChunkRangeReader = std::function<Result<bool>(ByteRange range, Bytes* out)>;

// One stored chunk with its parts located (sharding: the shard's index, read and checked).
class ChunkParts {
 public:
  virtual ~ChunkParts() = default;
  // True when part `position` (C order in the chunk) is not stored: it reads as the fill value.
  virtual bool empty(size_t position) const = 0;
  // The encoded bytes of a part that is not empty(), read by their range.
  virtual Status Read(size_t position, Bytes* encoded) const = 0;
};

class PartialDecoder {
 public:
  // A part of the array: the chunk that holds it and its position there (C order).
  struct PartLocation {
    std::vector<int64_t> chunk;
    size_t position = 0;
  };

  virtual ~PartialDecoder() = default;
  virtual const std::vector<int64_t>& part_shape() const = 0;
  virtual uint64_t parts_per_chunk() const = 0;
  // Where the part at `part_index` in the array's grid of parts lies.
  virtual PartLocation Locate(const std::vector<int64_t>& part_index) const = 0;
  // What one part of a chunk of `chunk_spec` decodes to, and the codecs that decode it.
  virtual ChunkSpec PartSpec(const ChunkSpec& chunk_spec) const = 0;
  virtual const CodecChain& part_codecs() const = 0;
  // Locates the parts of one chunk, reading it through `read`, which the result keeps for
  // reading the parts; nullptr when the chunk is absent.
  virtual Result<std::unique_ptr<ChunkParts>> Open(ChunkRangeReader read) const = 0;
};

}  // namespace zarrd
