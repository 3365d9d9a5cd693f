// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Zarr's crc32c codec:
// slicing by 8 over tables that the host keeps once and a GPU block builds in shared memory, and
// the shift that combines the CRCs of consecutive pieces (checksums.h), so that threads can each
// take a piece of one chunk.
//
// The functions work on the CRC register: a chunk's crc32c is ~Crc32cUpdate(t, ~0u, bytes).
#pragma once

#include <cstdint>

#include "common/decode/checksums.h"
#include "common/decode/host_device.h"

namespace zarrd::decode {

constexpr uint32_t kCrc32cPolynomial = 0x82F63B78u;

struct Crc32cTables {
  uint32_t t[8][256];
};

// Entry i of the tables (0 <= i < 8 * 256), so that many threads can build them at once.
ZARRD_HD inline uint32_t Crc32cTableEntry(uint32_t i) {
  uint32_t c = i & 0xff;
  for (uint32_t k = 0; k < 8 * (1 + (i >> 8)); ++k)
    c = (c & 1) ? (c >> 1) ^ kCrc32cPolynomial : c >> 1;
  return c;
}

ZARRD_HD inline void BuildCrc32cTables(Crc32cTables* tables, uint32_t first = 0,
                                       uint32_t step = 1) {
  for (uint32_t i = first; i < 8 * 256; i += step)
    tables->t[i >> 8][i & 0xff] = Crc32cTableEntry(i);
}

// The register after bytes p[0, n) from register `crc`.
ZARRD_HD inline uint32_t Crc32cUpdate(const Crc32cTables& tables, uint32_t crc, const uint8_t* p,
                                      uint64_t n) {
  const auto& t = tables.t;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
    --n;
  }
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = *reinterpret_cast<const uint32_t*>(p) ^ crc;
    const uint32_t hi = *reinterpret_cast<const uint32_t*>(p + 4);
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
          t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  while (n-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return crc;
}

// Piece i of p[0, n) cut into `pieces` equal pieces (the last ones shorter or empty): its share of
// the chunk's final register, which is the XOR of all pieces' shares. Piece 0 carries the
// initial register ~0.
ZARRD_HD inline uint32_t Crc32cPieceShare(const Crc32cTables& tables, const uint8_t* p, uint64_t n,
                                          uint32_t pieces, uint32_t i) {
  uint64_t begin, end;
  LanePiece(n, pieces, i, &begin, &end);
  uint32_t share =
      CrcShift<kCrc32cPolynomial>(Crc32cUpdate(tables, 0, p + begin, end - begin), n - end);
  if (i == 0) share ^= CrcShift<kCrc32cPolynomial>(~0u, n);
  return share;
}

}  // namespace zarrd::decode
