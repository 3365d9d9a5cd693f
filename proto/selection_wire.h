// Selections between the wire (zarrd.v1.Selection) and the engine (zarrd::Selection), for the
// server and the clients alike.
#pragma once

#include "common/index/advanced_selection.h"
#include "common/index/selection.h"
#include "zarrd/v1/zarrd.pb.h"

namespace zarrd {

Selection FromWire(const v1::Selection& selection);
v1::Selection ToWire(const Selection& selection);
// A resolved selection spelled out item by item (indices and explicit slices, no ellipsis).
v1::Selection ToWire(const ResolvedSelection& selection);

// Orthogonal, vectorized and mask selections: the engine resolves them with ResolveAdvanced.
bool IsAdvanced(const v1::Selection& selection);
// A basic or block selection as the engine's basic selection (blocks become element slices over
// the array's chunk grid).
Result<Selection> BasicFromWire(const v1::Selection& selection, const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& chunk_shape);
// An advanced selection resolved over `shape`; more than `max_elements` result elements is
// RESOURCE_EXHAUSTED.
Result<ResolvedAdvanced> AdvancedFromWire(const v1::Selection& selection,
                                          const std::vector<int64_t>& shape, int64_t max_elements);

}  // namespace zarrd
