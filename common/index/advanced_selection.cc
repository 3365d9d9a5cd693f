#include "common/index/advanced_selection.h"

#include <algorithm>
#include <string>

namespace zarrd {
namespace {

bool IsEllipsis(const AdvancedItem& item) {
  return !item.indices && !item.mask && item.basic.kind == SelectionItem::Kind::kEllipsis;
}
bool IsList(const AdvancedItem& item) { return item.indices || item.mask; }

Status OutOfBounds(int64_t i, size_t axis, int64_t n) {
  return OutOfRange("selection: index " + std::to_string(i) + " is out of bounds for axis " +
                    std::to_string(axis) + " with size " + std::to_string(n));
}

Status MaskLengthError(size_t axis, int64_t n, size_t got) {
  return InvalidArgument("selection: boolean index of length " + std::to_string(got) +
                         " does not match axis " + std::to_string(axis) + " of size " +
                         std::to_string(n));
}

// One item per dimension, the ellipsis expanded to full slices.
Result<std::vector<AdvancedItem>> Expand(const std::vector<AdvancedItem>& items, size_t rank) {
  size_t ellipses = 0;
  for (const auto& item : items) ellipses += IsEllipsis(item);
  if (ellipses > 1) return InvalidArgument("selection: an index can only have a single ellipsis");
  const size_t given = items.size() - ellipses;
  if (given > rank) {
    return InvalidArgument("selection: too many indices for array: array is " +
                           std::to_string(rank) + "-dimensional, but " + std::to_string(given) +
                           " were indexed");
  }
  std::vector<AdvancedItem> out;
  for (const auto& item : items) {
    if (IsEllipsis(item)) {
      out.insert(out.end(), rank - given, AdvancedItem::Basic(SelectionItem::Slice()));
    } else {
      out.push_back(item);
    }
  }
  out.resize(rank, AdvancedItem::Basic(SelectionItem::Slice()));
  return out;
}

// The list's indices made non-negative; a mask's true positions.
Result<std::vector<int64_t>> ListIndices(const AdvancedItem& item, size_t axis, int64_t n) {
  std::vector<int64_t> out;
  if (item.mask) {
    if (static_cast<int64_t>(item.mask->size()) != n) {
      return MaskLengthError(axis, n, item.mask->size());
    }
    for (int64_t i = 0; i < n; ++i) {
      if ((*item.mask)[i]) out.push_back(i);
    }
    return out;
  }
  out.reserve(item.indices->size());
  for (int64_t i : *item.indices) {
    if (i < -n || i >= n) return OutOfBounds(i, axis, n);
    out.push_back(i < 0 ? i + n : i);
  }
  return out;
}

std::vector<int64_t> SliceIndices(const DimSelection& dim) {
  std::vector<int64_t> out(dim.count);
  for (int64_t k = 0; k < dim.count; ++k) out[k] = dim.start + k * dim.step;
  return out;
}

Result<int64_t> CheckedProduct(const std::vector<int64_t>& lengths, int64_t max_elements) {
  int64_t n = 1;
  for (int64_t l : lengths) {
    if (l == 0) return int64_t{0};
  }
  for (int64_t l : lengths) {
    if (__builtin_mul_overflow(n, l, &n) || n > max_elements) {
      return ResourceExhausted("selection: the result has more than " +
                               std::to_string(max_elements) + " elements");
    }
  }
  return n;
}

}  // namespace

Result<ResolvedAdvanced> ResolveAdvanced(const std::vector<AdvancedItem>& items, AdvancedMode mode,
                                         const std::vector<int64_t>& point_shape,
                                         const std::vector<int64_t>& shape, int64_t max_elements) {
  const size_t rank = shape.size();
  ZARRD_ASSIGN_OR_RETURN(auto full, Expand(items, rank));
  ResolvedAdvanced out;
  out.fixed.assign(rank, -1);
  // Slices and integers first, with basic indexing's rules.
  Selection basic;
  for (const auto& item : full) basic.push_back(IsList(item) ? SelectionItem::Slice() : item.basic);
  ZARRD_ASSIGN_OR_RETURN(ResolvedSelection resolved, ResolveSelection(basic, shape));

  int64_t points = 1;
  if (mode == AdvancedMode::kVectorized) {
    for (int64_t s : point_shape) {
      if (s < 0 || __builtin_mul_overflow(points, s, &points)) {
        return InvalidArgument("selection: bad point shape");
      }
    }
  }
  // Where the point axis goes: numpy puts the broadcast dimensions in place of adjacent advanced
  // indices (lists and integers), else first.
  size_t first_advanced = rank, last_advanced = 0, advanced = 0, lists = 0;
  for (size_t d = 0; d < rank; ++d) {
    const bool adv = IsList(full[d]) || resolved.dims[d].dropped;
    if (mode == AdvancedMode::kVectorized && IsList(full[d])) {
      if (full[d].mask) {
        return InvalidArgument(
            "selection: a vectorized selection takes integer arrays, not masks"
            " (axis " +
            std::to_string(d) + ")");
      }
      if (static_cast<int64_t>(full[d].indices->size()) != points) {
        return InvalidArgument("selection: coordinate array on axis " + std::to_string(d) +
                               " has " + std::to_string(full[d].indices->size()) +
                               " values, the point shape needs " + std::to_string(points));
      }
    }
    lists += IsList(full[d]);
    if (!adv) continue;
    first_advanced = std::min(first_advanced, d);
    last_advanced = d;
    ++advanced;
  }
  const bool vectorized = mode == AdvancedMode::kVectorized && lists > 0;
  const bool adjacent = advanced > 0 && last_advanced - first_advanced + 1 == advanced;

  // Axis lengths, then the size check, then the lists.
  std::vector<int64_t> lengths;
  AdvancedAxis point_axis;
  point_axis.length = points;
  size_t point_position = 0;
  std::vector<size_t> axis_dim;  // array dimension of each non-point axis
  for (size_t d = 0; d < rank; ++d) {
    if (resolved.dims[d].dropped) {
      out.fixed[d] = resolved.dims[d].start;
      if (vectorized) point_axis.dims.push_back(d);
      continue;
    }
    if (vectorized && IsList(full[d])) {
      point_axis.dims.push_back(d);
      continue;
    }
    if (vectorized && adjacent && d < first_advanced) ++point_position;
    int64_t length = resolved.dims[d].count;
    if (IsList(full[d])) {
      length = full[d].mask ? 0 : static_cast<int64_t>(full[d].indices->size());
      if (full[d].mask) {
        if (static_cast<int64_t>(full[d].mask->size()) != shape[d]) {
          return MaskLengthError(d, shape[d], full[d].mask->size());
        }
        for (uint8_t b : *full[d].mask) length += b != 0;
      }
    }
    lengths.push_back(length);
    axis_dim.push_back(d);
  }
  if (vectorized) {
    // Integers among the point dimensions are fixed, not coordinates.
    std::vector<size_t> dims;
    for (size_t d : point_axis.dims) {
      if (IsList(full[d])) {
        dims.push_back(d);
      }
    }
    point_axis.dims = dims;
    lengths.insert(lengths.begin() + point_position, points);
  }
  ZARRD_ASSIGN_OR_RETURN(out.num_elements, CheckedProduct(lengths, max_elements));
  if (vectorized) {
    // Coordinates are checked even when the result is empty.
    for (size_t d : point_axis.dims) {
      ZARRD_ASSIGN_OR_RETURN(auto c, ListIndices(full[d], d, shape[d]));
      point_axis.coords.push_back(std::move(c));
    }
  } else {
    for (size_t d : axis_dim) {
      if (full[d].indices) ZARRD_RETURN_IF_ERROR(ListIndices(full[d], d, shape[d]).status());
    }
  }
  for (size_t a = 0; a < axis_dim.size(); ++a) {
    const size_t d = axis_dim[a];
    AdvancedAxis axis;
    axis.dims = {d};
    axis.length = lengths[vectorized && a >= point_position ? a + 1 : a];
    if (out.num_elements > 0) {
      if (IsList(full[d])) {
        ZARRD_ASSIGN_OR_RETURN(auto c, ListIndices(full[d], d, shape[d]));
        axis.coords.push_back(std::move(c));
      } else {
        axis.coords.push_back(SliceIndices(resolved.dims[d]));
      }
    }
    out.axes.push_back(std::move(axis));
  }
  if (vectorized) {
    out.axes.insert(out.axes.begin() + point_position, std::move(point_axis));
    for (size_t a = 0; a < out.axes.size(); ++a) {
      if (a == point_position) {
        out.result_shape.insert(out.result_shape.end(), point_shape.begin(), point_shape.end());
      } else {
        out.result_shape.push_back(out.axes[a].length);
      }
    }
  } else {
    for (const auto& axis : out.axes) out.result_shape.push_back(axis.length);
  }
  return out;
}

Result<ResolvedAdvanced> ResolveMask(const std::vector<uint8_t>& mask,
                                     const std::vector<int64_t>& shape) {
  int64_t size = 1;
  for (int64_t s : shape) {
    if (__builtin_mul_overflow(size, s, &size))
      return InvalidArgument("selection: array too large");
  }
  if (static_cast<int64_t>(mask.size()) != size) {
    return InvalidArgument("selection: boolean mask of " + std::to_string(mask.size()) +
                           " elements, the array has " + std::to_string(size));
  }
  const size_t rank = shape.size();
  AdvancedAxis axis;
  axis.coords.resize(rank);
  for (size_t d = 0; d < rank; ++d) axis.dims.push_back(d);
  std::vector<int64_t> at(rank, 0);
  for (int64_t i = 0; i < size; ++i) {
    if (mask[i]) {
      for (size_t d = 0; d < rank; ++d) axis.coords[d].push_back(at[d]);
    }
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < shape[d]) break;
      at[d] = 0;
    }
  }
  ResolvedAdvanced out;
  out.fixed.assign(rank, -1);
  axis.length = rank ? static_cast<int64_t>(axis.coords[0].size()) : 0;
  out.num_elements = axis.length;
  out.result_shape = {axis.length};
  out.axes.push_back(std::move(axis));
  return out;
}

Result<Selection> BlockSelection(const Selection& blocks, const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& chunk_shape) {
  std::vector<int64_t> grid(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    grid[d] = chunk_shape[d] > 0 ? (shape[d] + chunk_shape[d] - 1) / chunk_shape[d] : 0;
  }
  Selection kept;  // integers select one block and keep their dimension
  for (const auto& item : blocks) {
    if (item.kind == SelectionItem::Kind::kSlice && item.step.value_or(1) != 1) {
      return InvalidArgument("block selection: slice step must be 1");
    }
    kept.push_back(item);
  }
  auto resolved = ResolveSelection(kept, grid);
  if (!resolved.ok()) return resolved.status().WithContext("block selection");
  Selection out;
  for (size_t d = 0; d < shape.size(); ++d) {
    const DimSelection& b = resolved->dims[d];
    const int64_t start = b.start * chunk_shape[d];
    const int64_t stop = std::min(shape[d], (b.start + b.count) * chunk_shape[d]);
    out.push_back(SelectionItem::Slice(start, std::max(start, stop), 1));
  }
  return out;
}

}  // namespace zarrd
