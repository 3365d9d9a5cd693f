// The checksums of the deflate wrappers: CRC-32 (gzip, RFC 1952) and Adler-32 (zlib, RFC 1950),
// computed on one thread over a whole output. The CRC uses a 16-entry table (4 bits a step) kept
// in registers, so the same code runs on the device without a table in global memory.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"

namespace zarrd::decode {

ZARRD_HD inline uint32_t Crc32(const uint8_t* p, uint64_t n, uint32_t crc = 0) {
  constexpr uint32_t kNibble[16] = {0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
                                    0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
                                    0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
                                    0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c};
  crc = ~crc;
  for (uint64_t i = 0; i < n; ++i) {
    crc ^= p[i];
    crc = (crc >> 4) ^ kNibble[crc & 15];
    crc = (crc >> 4) ^ kNibble[crc & 15];
  }
  return ~crc;
}

ZARRD_HD inline uint32_t Adler32(const uint8_t* p, uint64_t n) {
  constexpr uint32_t kMod = 65521;
  constexpr uint64_t kRun = 5552;  // the most bytes before b can overflow 32 bits
  uint32_t a = 1, b = 0;
  while (n > 0) {
    const uint64_t run = n < kRun ? n : kRun;
    for (uint64_t i = 0; i < run; ++i) {
      a += p[i];
      b += a;
    }
    a %= kMod;
    b %= kMod;
    p += run;
    n -= run;
  }
  return b << 16 | a;
}

}  // namespace zarrd::decode
