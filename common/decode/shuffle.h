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

// Byte j of element i from the eight bit rows (of row_bytes each) that hold byte j's bits.
ZARRD_HD inline uint8_t GatherBits(const uint8_t* in, uint64_t row_bytes, uint64_t i, uint64_t j) {
  const uint8_t* rows = in + j * 8 * row_bytes + i / 8;
  const uint32_t shift = i % 8;
  uint8_t v = 0;
  for (uint32_t b = 0; b < 8; ++b) v |= ((rows[b * row_bytes] >> shift) & 1u) << b;
  return v;
}

// Output byte `k` of a bit-shuffled block; only when BitshuffleApplies.
ZARRD_HD inline uint8_t BitunshuffleByte(const uint8_t* in, uint64_t size, uint32_t typesize,
                                         uint64_t k) {
  const uint64_t n = size / typesize;
  if (k >= n * typesize) return in[k];
  return GatherBits(in, n / 8, k / typesize, k % typesize);
}

// Element i and byte j of the output bytes k = lane, lane + count, ..., stepped without a
// division per byte.
struct ElementCursor {
  uint64_t k, i, j, di, dj;
  uint32_t typesize;
  ZARRD_HD ElementCursor(uint64_t first, uint64_t stride, uint32_t ts)
      : k(first), i(first / ts), j(first % ts), di(stride / ts), dj(stride % ts), typesize(ts) {}
  ZARRD_HD void Advance(uint64_t stride) {
    k += stride;
    i += di;
    j += dj;
    if (j >= typesize) {
      j -= typesize;
      ++i;
    }
  }
};

template <typename Lanes = SerialLanes>
ZARRD_HD inline void Unshuffle(const uint8_t* in, uint64_t size, uint32_t typesize, uint8_t* out,
                               const Lanes& lanes = Lanes()) {
  const uint64_t n = size / typesize, stride = lanes.count();
  for (ElementCursor c(lanes.lane(), stride, typesize); c.k < size; c.Advance(stride)) {
    out[c.k] = c.i < n ? in[c.j * n + c.i] : in[c.k];
  }
}

template <typename Lanes = SerialLanes>
ZARRD_HD inline void Bitunshuffle(const uint8_t* in, uint64_t size, uint32_t typesize, uint8_t* out,
                                  const Lanes& lanes = Lanes()) {
  if (!BitshuffleApplies(size, typesize)) {
    LaneCopy(lanes, out, in, size);
    return;
  }
  const uint64_t n = size / typesize, row_bytes = n / 8, stride = lanes.count();
  for (ElementCursor c(lanes.lane(), stride, typesize); c.k < size; c.Advance(stride)) {
    out[c.k] = c.i < n ? GatherBits(in, row_bytes, c.i, c.j) : in[c.k];
  }
}

}  // namespace zarrd::decode
