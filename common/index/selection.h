// Basic indexing with numpy's semantics: integers, slices start:stop:step, one ellipsis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/status.h"

namespace zarrd {

struct SelectionItem {
  enum class Kind { kIndex, kSlice, kEllipsis };
  Kind kind = Kind::kSlice;
  int64_t index = 0;                         // kIndex
  std::optional<int64_t> start, stop, step;  // kSlice; absent means numpy's default

  static SelectionItem Index(int64_t i) { return {Kind::kIndex, i, {}, {}, {}}; }
  static SelectionItem Slice(std::optional<int64_t> start = {}, std::optional<int64_t> stop = {},
                             std::optional<int64_t> step = {}) {
    return {Kind::kSlice, 0, start, stop, step};
  }
  static SelectionItem Ellipsis() { return {Kind::kEllipsis, 0, {}, {}, {}}; }
};

using Selection = std::vector<SelectionItem>;

// Parses numpy-style text: "1, 2:10:3, ..., ::-1". An empty string selects everything.
Result<Selection> ParseSelection(std::string_view text);
std::string SelectionToString(const Selection& selection);

// One dimension of a selection resolved against its extent: indices start + k * step, k < count.
struct DimSelection {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
  bool dropped = false;  // selected by an integer: not in the result shape
};

struct ResolvedSelection {
  std::vector<DimSelection> dims;     // one per array dimension
  std::vector<int64_t> result_shape;  // numpy's result shape
  // Both saturate (at INT64_MAX and UINT64_MAX) instead of wrapping around, so a size check
  // against a limit refuses what does not fit.
  int64_t num_elements() const;
  uint64_t num_bytes(size_t item_size) const;
};

// Applies numpy's rules: negative indices count from the end, slices clamp, integers out of
// range are OUT_OF_RANGE, a zero step or too many indices are INVALID_ARGUMENT.
Result<ResolvedSelection> ResolveSelection(const Selection& selection,
                                           const std::vector<int64_t>& shape);

}  // namespace zarrd
