#include "common/index/band_plan.h"

#include <algorithm>

#include "common/util/checked.h"

namespace zarrd {

std::vector<Band> PlanBands(const ResolvedSelection& sel, const std::vector<int64_t>& chunk_shape,
                            size_t item_size, const BandLimits& limits) {
  size_t d0 = 0;
  while (d0 < sel.dims.size() && sel.dims[d0].dropped) ++d0;
  const uint64_t total = sel.num_bytes(item_size);
  if (d0 == sel.dims.size() || total == 0) {
    if (limits.max_bytes && total > limits.max_bytes) return {};
    return {Band{sel, 0, total}};
  }
  const DimSelection dim = sel.dims[d0];
  const uint64_t row_bytes =
      SaturatingMul(static_cast<uint64_t>(sel.num_elements() / dim.count), item_size);
  if (limits.max_bytes && row_bytes > limits.max_bytes) return {};
  const uint64_t max_rows =
      limits.max_bytes ? limits.max_bytes / row_bytes : static_cast<uint64_t>(dim.count);
  uint64_t target = limits.target_bytes;
  uint64_t bands_wanted = 0;
  if (limits.max_bands) {
    bands_wanted =
        std::clamp<uint64_t>(target ? total / target : limits.max_bands, 1, limits.max_bands);
    target = total / bands_wanted + (total % bands_wanted != 0);
  }
  const int64_t chunk = d0 < chunk_shape.size() && chunk_shape[d0] > 0 ? chunk_shape[d0] : 1;
  // Result rows from k to the last one in the same chunk (indices fall as k grows for a
  // negative step).
  const auto run = [&](int64_t k) {
    const int64_t in_chunk = (dim.start + k * dim.step) % chunk;
    const uint64_t rows =
        dim.step > 0 ? static_cast<uint64_t>(chunk - 1 - in_chunk) / dim.step + 1
                     : static_cast<uint64_t>(in_chunk) / (0 - static_cast<uint64_t>(dim.step)) + 1;
    return static_cast<int64_t>(std::min<uint64_t>(rows, dim.count - k));
  };
  using Wide = unsigned __int128;
  std::vector<Band> bands;
  int64_t k0 = 0;
  while (k0 < dim.count) {
    const bool last = bands_wanted && bands.size() + 1 >= bands_wanted;
    int64_t k1 = k0 + run(k0);
    if (static_cast<uint64_t>(k1 - k0) > max_rows) {
      k1 = k0 + static_cast<int64_t>(max_rows);
    } else {
      while (k1 < dim.count) {
        const int64_t r = run(k1);
        const Wide have = Wide(k1 - k0) * row_bytes, add = Wide(r) * row_bytes;
        if (limits.max_bytes && have + add > limits.max_bytes) break;
        if (!last && 2 * have + add >= 2 * Wide(target)) break;
        k1 += r;
      }
    }
    Band band{sel, static_cast<uint64_t>(k0) * row_bytes,
              static_cast<uint64_t>(k1 - k0) * row_bytes};
    band.selection.dims[d0].start = dim.start + k0 * dim.step;
    band.selection.dims[d0].count = k1 - k0;
    band.selection.result_shape[0] = k1 - k0;
    bands.push_back(std::move(band));
    k0 = k1;
  }
  return bands;
}

}  // namespace zarrd
