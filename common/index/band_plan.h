// One rule for splitting a large basic read into row bands, used by the server's GetItemStream,
// the C++ client and (ported line for line in client/python/zarrd/stream.py) the Python client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/index/selection.h"

namespace zarrd {

struct Band {
  ResolvedSelection selection;
  uint64_t offset = 0;  // of the band's first byte in the whole result
  uint64_t nbytes = 0;
};

struct BandLimits {
  uint64_t target_bytes = 0;  // about this much a band
  uint64_t max_bytes = 0;     // at most this much a band; 0: no bound
  // At most this many bands (fewer when the result is under target_bytes a band), as equal as
  // chunk edges allow; 0: no bound. max_bytes wins when the two cannot both hold.
  size_t max_bands = 0;
};

// Splits `sel` along its first non-dropped dimension into bands that together cover the result
// once, in order. Band edges fall on edges of `chunk_shape` (the chunk grid read) along that
// dimension, for any step, so no chunk is decoded for two bands; only a chunk whose selected
// rows alone exceed max_bytes is cut, at max_bytes. A band takes whole chunks while that brings
// it closer to target_bytes. Empty when one result row exceeds max_bytes.
std::vector<Band> PlanBands(const ResolvedSelection& sel, const std::vector<int64_t>& chunk_shape,
                            size_t item_size, const BandLimits& limits);

}  // namespace zarrd
