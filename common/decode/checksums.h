// The checksums of the deflate wrappers, CRC-32 (gzip, RFC 1952) and Adler-32 (zlib, RFC 1950),
// and the shift that combines the CRCs of consecutive pieces (of any reflected polynomial: CRC-32
// here, CRC-32C in crc32c.h). The CRC-32 uses a 16-entry table (4 bits a step) kept in the code,
// so it runs on the device without a table in memory; the lanes of a warp each take a piece of
// the output (LaneCrc32, LaneAdler32) and combine their shares.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"

namespace zarrd::decode {

constexpr uint32_t kCrc32Polynomial = 0xEDB88320u;

// a * b modulo the reflected polynomial `kPoly`, both in the register's order (bit 31 is x^0).
template <uint32_t kPoly>
ZARRD_HD inline uint32_t CrcMultiply(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
    if (a & bit) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return product;
}

// The register after n zero bytes from register `crc`: crc * x^(8n). The register of pieces A
// then B from register r is then CrcShift(Update(r, A), |B|) ^ Update(0, B).
template <uint32_t kPoly>
ZARRD_HD inline uint32_t CrcShift(uint32_t crc, uint64_t n) {
  uint32_t power = 1u << 23;  // x^8: one byte
  for (; n != 0; n >>= 1) {
    if (n & 1) crc = CrcMultiply<kPoly>(crc, power);
    power = CrcMultiply<kPoly>(power, power);
  }
  return crc;
}

// The CRC-32 register after bytes p[0, n) from register `crc` (no inversions).
ZARRD_HD inline uint32_t Crc32Update(uint32_t crc, const uint8_t* p, uint64_t n) {
  constexpr uint32_t kNibble[16] = {0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
                                    0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
                                    0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
                                    0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c};
  for (uint64_t i = 0; i < n; ++i) {
    crc ^= p[i];
    crc = (crc >> 4) ^ kNibble[crc & 15];
    crc = (crc >> 4) ^ kNibble[crc & 15];
  }
  return crc;
}

// The CRC-32 of p[0, n), as zlib's crc32(0, p, n).
ZARRD_HD inline uint32_t Crc32(const uint8_t* p, uint64_t n) { return ~Crc32Update(~0u, p, n); }

// Lane `lane` of `count`'s piece of [0, n): equal pieces, the last ones shorter or empty.
ZARRD_HD inline void LanePiece(uint64_t n, uint32_t count, uint32_t lane, uint64_t* begin,
                               uint64_t* end) {
  const uint64_t length = (n + count - 1) / count;
  *begin = length * lane < n ? length * lane : n;
  *end = n - *begin < length ? n : *begin + length;
}

// The CRC-32 of p[0, n), each lane taking a piece; every lane gets it.
template <typename Lanes>
ZARRD_HD inline uint32_t LaneCrc32(const Lanes& lanes, const uint8_t* p, uint64_t n) {
  uint64_t begin, end;
  LanePiece(n, lanes.count(), lanes.lane(), &begin, &end);
  uint32_t share = CrcShift<kCrc32Polynomial>(Crc32Update(0, p + begin, end - begin), n - end);
  if (lanes.lane() == 0) share ^= CrcShift<kCrc32Polynomial>(~0u, n);
  return ~lanes.Xor(share);
}

// The Adler-32 of p[0, n), each lane taking a piece; every lane gets it. A piece [b, e) adds
// sum(p) to a and sum((n - i) * p[i]) to b: its own run's b plus (n - e) * sum(p).
template <typename Lanes>
ZARRD_HD inline uint32_t LaneAdler32(const Lanes& lanes, const uint8_t* p, uint64_t n) {
  constexpr uint32_t kMod = 65521;
  constexpr uint64_t kRun = 5552;  // the most bytes before b can overflow 32 bits
  uint64_t begin, end;
  LanePiece(n, lanes.count(), lanes.lane(), &begin, &end);
  uint32_t a = 0, b = 0;
  for (uint64_t at = begin; at < end;) {
    const uint64_t run = end - at < kRun ? end - at : kRun;
    for (uint64_t i = 0; i < run; ++i) {
      a += p[at + i];
      b += a;
    }
    a %= kMod;
    b %= kMod;
    at += run;
  }
  b = static_cast<uint32_t>((b + uint64_t{a} * ((n - end) % kMod)) % kMod);
  const uint32_t sum_a = (lanes.Sum(a) + 1) % kMod;  // 32 shares under kMod: no overflow
  const uint32_t sum_b = static_cast<uint32_t>((lanes.Sum(b) + n % kMod) % kMod);
  return sum_b << 16 | sum_a;
}

}  // namespace zarrd::decode
