// numpy's advanced indexing: orthogonal (outer) index lists and per-dimension masks, vectorized
// (point) coordinates, a boolean mask of the whole array, and zarr's block selection.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/index/selection.h"

namespace zarrd {

// One item of an advanced index expression: a basic item, an integer list, or (orthogonal
// only) a boolean mask of its dimension's length.
struct AdvancedItem {
  SelectionItem basic;
  std::optional<std::vector<int64_t>> indices;
  std::optional<std::vector<uint8_t>> mask;

  static AdvancedItem Basic(SelectionItem item) { return {item, {}, {}}; }
  static AdvancedItem Indices(std::vector<int64_t> v) { return {{}, std::move(v), {}}; }
  static AdvancedItem Mask(std::vector<uint8_t> m) { return {{}, {}, std::move(m)}; }
};

enum class AdvancedMode { kOrthogonal, kVectorized };

// One axis of the result as the engine lays it out (a point axis stands for all the dimensions
// of the broadcast coordinate arrays): for each position k < length, the element index along each
// of `dims`.
struct AdvancedAxis {
  std::vector<size_t> dims;
  int64_t length = 0;
  std::vector<std::vector<int64_t>> coords;  // [j][k], one list per entry of dims
};

struct ResolvedAdvanced {
  std::vector<int64_t> fixed;         // per array dimension: the index an integer fixed, or -1
  std::vector<AdvancedAxis> axes;     // the result's axes in C order (a point axis is one)
  std::vector<int64_t> result_shape;  // numpy's result shape
  int64_t num_elements = 0;
};

// Resolves `items` over `shape` with numpy's rules: negative indices count from the end, slices
// clamp, an ellipsis expands. Orthogonal: each list or mask selects along its own dimension
// (numpy's ix_). Vectorized: every list has prod(point_shape) coordinates (the broadcast arrays,
// C order) and together they select points; integers join them; the points' axes go where the
// first list was if the lists and integers are adjacent, else first, as numpy puts them. Indices
// out of range are OUT_OF_RANGE naming the axis; a result of more than `max_elements` elements
// is RESOURCE_EXHAUSTED before any list is expanded.
Result<ResolvedAdvanced> ResolveAdvanced(const std::vector<AdvancedItem>& items, AdvancedMode mode,
                                         const std::vector<int64_t>& point_shape,
                                         const std::vector<int64_t>& shape, int64_t max_elements);

// zarr's `a[mask]`: `mask` (one byte per element, C order) has the array's shape; the result is
// the selected elements, 1-d in C order.
Result<ResolvedAdvanced> ResolveMask(const std::vector<uint8_t>& mask,
                                     const std::vector<int64_t>& shape);

// zarr's `a.blocks[...]`: per dimension a chunk index (the dimension stays) or a slice of chunk
// indices with step 1, turned into element slices.
Result<Selection> BlockSelection(const Selection& blocks, const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& chunk_shape);

}  // namespace zarrd
