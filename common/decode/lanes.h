// Who copies the bytes of a literal run or a match: one host thread (SerialLanes) or the 32 lanes
// of a CUDA warp (WarpLanes, common/cuda). The LZ cores parse each sequence in every lane (the
// same bytes, so no divergence) and split the copies by lane; Sync() orders a lane's writes
// before another lane reads them; Broadcast hands lane 0's result (of
// a step only lane 0 runs) to all lanes; Xor and Sum combine every lane's value (each lane's
// share of a checksum).
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"

namespace zarrd::decode {

struct SerialLanes {
  ZARRD_HD uint32_t lane() const { return 0; }
  ZARRD_HD uint32_t count() const { return 1; }
  ZARRD_HD void Sync() const {}
  // Lane 0's value, in every lane.
  ZARRD_HD uint32_t Broadcast(uint32_t v) const { return v; }
  ZARRD_HD uint32_t Xor(uint32_t v) const { return v; }
  ZARRD_HD uint32_t Sum(uint32_t v) const { return v; }
};

// dst[0, n) = src[0, n); the ranges do not overlap.
template <typename Lanes>
ZARRD_HD inline void LaneCopy(const Lanes& lanes, uint8_t* dst, const uint8_t* src, uint64_t n) {
  for (uint64_t i = lanes.lane(); i < n; i += lanes.count()) dst[i] = src[i];
}

// An LZ77 match: out[pos, pos + len) repeats the bytes `distance` back. When the match overlaps
// itself the bytes repeat with period `distance`, so every byte is computed from bytes written
// before the match and the lanes need no ordering among themselves.
template <typename Lanes>
ZARRD_HD inline void LaneMatch(const Lanes& lanes, uint8_t* out, uint64_t pos, uint64_t distance,
                               uint64_t len) {
  const uint8_t* from = out + pos - distance;
  uint8_t* to = out + pos;
  if (distance >= len || lanes.count() == 1) {
    // A forward byte copy is also right for an overlapping match on one lane.
    for (uint64_t i = lanes.lane(); i < len; i += lanes.count()) to[i] = from[i];
    return;
  }
  // i % distance, kept up to date without a division per byte (step < distance).
  const uint64_t step = lanes.count() % distance;
  uint64_t m = lanes.lane() % distance;
  for (uint64_t i = lanes.lane(); i < len; i += lanes.count()) {
    to[i] = from[m];
    m += step;
    if (m >= distance) m -= distance;
  }
}

}  // namespace zarrd::decode
