// Splits a resolved selection over a regular chunk grid: which chunks it touches, and for each
// the strided copy between the chunk and the result.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/index/selection.h"

namespace zarrd {

// The part of one dimension's selection that falls in one chunk.
struct ChunkDimPart {
  int64_t chunk = 0;        // chunk index along the dimension
  int64_t k_begin = 0;      // first selected position (index into the selection)
  int64_t k_count = 0;      // selected positions in this chunk
  int64_t local_first = 0;  // chunk-local element index of position k_begin
};

// A strided block copy between a chunk buffer and the result buffer (byte offsets and strides).
struct Placement {
  int64_t chunk_offset = 0;
  int64_t result_offset = 0;
  std::vector<int64_t> chunk_strides, result_strides, counts;
  // True when every element of the chunk is selected.
  bool covers_chunk = false;
  // True when the chunk's bytes are one contiguous run of the result, in order.
  bool contiguous = false;
};

class ChunkSelection {
 public:
  ChunkSelection(const ResolvedSelection& selection, std::vector<int64_t> chunk_shape,
                 size_t elem_size);

  size_t num_chunks() const { return num_chunks_; }
  // Parts of the n-th touched chunk (C order over touched chunks), one per dimension.
  std::vector<ChunkDimPart> Parts(size_t n) const;
  std::vector<int64_t> ChunkIndex(const std::vector<ChunkDimPart>& parts) const;
  Placement Place(const std::vector<ChunkDimPart>& parts) const;
  // The same for a chunk stored transposed: C order over its dimensions in `dimension_order`
  // (stored dimension i is chunk dimension dimension_order[i]; empty: C order).
  Placement Place(const std::vector<ChunkDimPart>& parts,
                  std::span<const size_t> dimension_order) const;

 private:
  const ResolvedSelection& selection_;
  std::vector<int64_t> chunk_shape_;
  size_t elem_size_;
  std::vector<int64_t> chunk_strides_;   // of a whole chunk, C order
  std::vector<int64_t> result_strides_;  // per array dimension (0 for dropped ones)
  std::vector<std::vector<ChunkDimPart>> per_dim_;
  size_t num_chunks_ = 0;
};

}  // namespace zarrd
