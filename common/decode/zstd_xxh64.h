// XXH64 (the content checksum of zstd frames: its low 32 bits), computed in one pass.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"

namespace zarrd::decode::zstd {

namespace xxh64 {
constexpr uint64_t kP1 = 11400714785074694791ull;
constexpr uint64_t kP2 = 14029467366897019727ull;
constexpr uint64_t kP3 = 1609587929392839161ull;
constexpr uint64_t kP4 = 9650029242287828579ull;
constexpr uint64_t kP5 = 2870177450012600261ull;

ZARRD_HD inline uint64_t Rotl(uint64_t x, uint32_t r) { return (x << r) | (x >> (64 - r)); }
ZARRD_HD inline uint64_t Round(uint64_t acc, uint64_t input) {
  return Rotl(acc + input * kP2, 31) * kP1;
}
ZARRD_HD inline uint64_t Merge(uint64_t acc, uint64_t v) { return (acc ^ Round(0, v)) * kP1 + kP4; }
}  // namespace xxh64

ZARRD_HD inline uint64_t Xxh64(const uint8_t* p, uint64_t len, uint64_t seed) {
  using namespace xxh64;
  const uint8_t* const end = p + len;
  uint64_t h;
  if (len >= 32) {
    uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    for (; end - p >= 32; p += 32) {
      v1 = Round(v1, ReadLE64(p));
      v2 = Round(v2, ReadLE64(p + 8));
      v3 = Round(v3, ReadLE64(p + 16));
      v4 = Round(v4, ReadLE64(p + 24));
    }
    h = Rotl(v1, 1) + Rotl(v2, 7) + Rotl(v3, 12) + Rotl(v4, 18);
    h = Merge(Merge(Merge(Merge(h, v1), v2), v3), v4);
  } else {
    h = seed + kP5;
  }
  h += len;
  for (; end - p >= 8; p += 8) h = Rotl(h ^ Round(0, ReadLE64(p)), 27) * kP1 + kP4;
  if (end - p >= 4) {
    h = Rotl(h ^ (uint64_t(ReadLE32(p)) * kP1), 23) * kP2 + kP3;
    p += 4;
  }
  for (; p < end; ++p) h = Rotl(h ^ (*p * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

}  // namespace zarrd::decode::zstd
