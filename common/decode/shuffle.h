// Undoing blosc's byte shuffle and bit shuffle of one block (c-blosc 1.x layouts).
//
// Byte shuffle of a block of n = size / typesize elements stores byte j of element i at
// j * n + i; the size % typesize bytes left over at the end are stored unshuffled.
// Bit shuffle (bitshuffle's layout) needs n to be a multiple of 8, else the whole block is stored
// as is; otherwise n is rounded down to a multiple of 8 (c-blosc passes size / typesize elements
// and copies the size % typesize bytes after them unshuffled). Bit b of byte j of element i is
// bit i % 8 of byte (j * 8 + b) * n / 8 + i / 8.
//
// Parallel split: each output byte depends only on the input, so UnshuffleByte/BitunshuffleByte
// compute one output byte each (a GPU thread per byte or per element); Unshuffle/Bitunshuffle
// loop over the bytes with a lane stride. `in` and `out` must not overlap.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/lanes.h"

namespace zarrd::decode {

// Output byte `k` of a byte-shuffled block of `size` bytes.
ZARRD_HD inline uint8_t UnshuffleByte(const uint8_t* in, uint64_t size, uint32_t typesize,
                                      uint64_t k) {
  const uint64_t n = size / typesize;
  if (k >= n * typesize) return in[k];
  return in[(k % typesize) * n + k / typesize];
}

// True when c-blosc bit-shuffles a block of `size` bytes of `typesize`-byte elements.
ZARRD_HD inline bool BitshuffleApplies(uint64_t size, uint32_t typesize) {
  return size >= typesize && (size / typesize) % 8 == 0;
}

// Output byte `k` of a bit-shuffled block; only when BitshuffleApplies.
ZARRD_HD inline uint8_t BitunshuffleByte(const uint8_t* in, uint64_t size, uint32_t typesize,
                                         uint64_t k) {
  const uint64_t n = size / typesize;
  if (k >= n * typesize) return in[k];
  const uint64_t i = k / typesize, j = k % typesize;
  const uint64_t row_bytes = n / 8;
  const uint8_t* rows = in + j * 8 * row_bytes + i / 8;
  const uint32_t shift = i % 8;
  uint8_t v = 0;
  for (uint32_t b = 0; b < 8; ++b) v |= ((rows[b * row_bytes] >> shift) & 1u) << b;
  return v;
}

template <typename Lanes = SerialLanes>
ZARRD_HD inline void Unshuffle(const uint8_t* in, uint64_t size, uint32_t typesize, uint8_t* out,
                               const Lanes& lanes = Lanes()) {
  for (uint64_t k = lanes.lane(); k < size; k += lanes.count()) {
    out[k] = UnshuffleByte(in, size, typesize, k);
  }
}

template <typename Lanes = SerialLanes>
ZARRD_HD inline void Bitunshuffle(const uint8_t* in, uint64_t size, uint32_t typesize, uint8_t* out,
                                  const Lanes& lanes = Lanes()) {
  const bool applies = BitshuffleApplies(size, typesize);
  for (uint64_t k = lanes.lane(); k < size; k += lanes.count()) {
    out[k] = applies ? BitunshuffleByte(in, size, typesize, k) : in[k];
  }
}

}  // namespace zarrd::decode
