#include "common/index/chunk_selection.h"

#include <algorithm>

#include "common/util/strided_copy.h"

namespace zarrd {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// One part per chunk that holds selected indices, found by jumping from run to run, so a huge
// step over a long grid costs the parts it makes, not the chunks it skips.
std::vector<ChunkDimPart> SplitDim(const DimSelection& dim, int64_t chunk) {
  std::vector<ChunkDimPart> parts;
  for (int64_t k = 0; k < dim.count;) {
    const int64_t index = dim.start + k * dim.step;
    const int64_t c = index / chunk;
    const int64_t local = index - c * chunk;
    // Selected indices left in this chunk from `index` on (|step| < extent once count > 1).
    const int64_t in_chunk =
        dim.step > 0 ? CeilDiv(chunk - local, dim.step) : local / -dim.step + 1;
    const int64_t n = std::min(dim.count - k, in_chunk);
    parts.push_back({c, k, n, local});
    k += n;
  }
  return parts;
}

}  // namespace

ChunkSelection::ChunkSelection(const ResolvedSelection& selection, std::vector<int64_t> chunk_shape,
                               size_t elem_size)
    : selection_(selection), chunk_shape_(std::move(chunk_shape)), elem_size_(elem_size) {
  const size_t rank = selection.dims.size();
  auto packed = COrderStrides(selection.result_shape, elem_size);
  result_strides_.assign(rank, 0);
  for (size_t d = 0, r = 0; d < rank; ++d) {
    if (!selection.dims[d].dropped) result_strides_[d] = packed[r++];
  }
  chunk_strides_ = COrderStrides(chunk_shape_, elem_size);
  num_chunks_ = 1;
  for (size_t d = 0; d < rank; ++d) {
    per_dim_.push_back(SplitDim(selection.dims[d], chunk_shape_[d]));
    num_chunks_ *= per_dim_.back().size();
  }
}

std::vector<ChunkDimPart> ChunkSelection::Parts(size_t n) const {
  std::vector<ChunkDimPart> parts(per_dim_.size());
  for (size_t d = per_dim_.size(); d-- > 0;) {
    parts[d] = per_dim_[d][n % per_dim_[d].size()];
    n /= per_dim_[d].size();
  }
  return parts;
}

std::vector<int64_t> ChunkSelection::ChunkIndex(const std::vector<ChunkDimPart>& parts) const {
  std::vector<int64_t> index;
  index.reserve(parts.size());
  for (const auto& p : parts) index.push_back(p.chunk);
  return index;
}

Placement ChunkSelection::Place(const std::vector<ChunkDimPart>& parts) const {
  return Place(parts, {});
}

Placement ChunkSelection::Place(const std::vector<ChunkDimPart>& parts,
                                std::span<const size_t> dimension_order) const {
  const size_t rank = parts.size();
  std::vector<int64_t> stored_strides;
  if (!dimension_order.empty()) {
    std::vector<int64_t> stored_shape(rank);
    for (size_t i = 0; i < rank; ++i) stored_shape[i] = chunk_shape_[dimension_order[i]];
    const std::vector<int64_t> c_order = COrderStrides(stored_shape, elem_size_);
    stored_strides.resize(rank);
    for (size_t i = 0; i < rank; ++i) stored_strides[dimension_order[i]] = c_order[i];
  }
  const auto& chunk_strides = dimension_order.empty() ? chunk_strides_ : stored_strides;
  Placement p;
  p.chunk_strides.reserve(rank);
  p.result_strides.reserve(rank);
  p.counts.reserve(rank);
  p.covers_chunk = true;
  p.contiguous = true;
  int64_t expected_stride = static_cast<int64_t>(elem_size_);
  for (size_t d = rank; d-- > 0;) {
    const DimSelection& dim = selection_.dims[d];
    const ChunkDimPart& part = parts[d];
    p.chunk_offset += part.local_first * chunk_strides[d];
    p.result_offset += part.k_begin * result_strides_[d];
    p.chunk_strides.push_back(dim.step * chunk_strides[d]);
    p.result_strides.push_back(result_strides_[d]);
    p.counts.push_back(part.k_count);
    const bool full = dim.step == 1 && part.local_first == 0 && part.k_count == chunk_shape_[d];
    p.covers_chunk &= full;
    if (chunk_shape_[d] > 1 && result_strides_[d] != expected_stride) p.contiguous = false;
    expected_stride *= chunk_shape_[d];
  }
  p.contiguous &= p.covers_chunk && dimension_order.empty();
  std::reverse(p.chunk_strides.begin(), p.chunk_strides.end());
  std::reverse(p.result_strides.begin(), p.result_strides.end());
  std::reverse(p.counts.begin(), p.counts.end());
  return p;
}

}  // namespace zarrd
