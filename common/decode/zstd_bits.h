// Byte and bit readers of the zstd core: little-endian loads, the forward bit reader of FSE
// table descriptions and the backward bit reader of Huffman and sequence streams. Reads past the
// end of a buffer yield zero bits and never touch memory outside it; the backward reader counts
// how far it ran past the start so that callers can require a stream to be consumed exactly.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"

namespace zarrd::decode::zstd {

ZARRD_HD inline uint32_t ReadLE16(const uint8_t* p) { return p[0] | (uint32_t(p[1]) << 8); }
ZARRD_HD inline uint32_t ReadLE24(const uint8_t* p) { return ReadLE16(p) | (uint32_t(p[2]) << 16); }
ZARRD_HD inline uint32_t ReadLE32(const uint8_t* p) { return ReadLE24(p) | (uint32_t(p[3]) << 24); }

// A block header (RFC 8878 3.1.1.2).
struct BlockHeader {
  bool last;
  uint32_t type;  // 0 raw, 1 RLE, 2 compressed, 3 reserved
  uint32_t size;
};
// Reads the block header at src[*pos] and passes it; false when fewer than 3 bytes are left.
ZARRD_HD inline bool ReadBlockHeader(const uint8_t* src, uint64_t size, uint64_t* pos,
                                     BlockHeader* h) {
  if (size - *pos < 3) return false;
  const uint32_t header = ReadLE24(src + *pos);
  *pos += 3;
  *h = BlockHeader{(header & 1) != 0, (header >> 1) & 3, header >> 3};
  return true;
}
ZARRD_HD inline uint64_t ReadLE64(const uint8_t* p) {
  return ReadLE32(p) | (uint64_t(ReadLE32(p + 4)) << 32);
}

// Index of the highest set bit; v must not be 0.
ZARRD_HD inline uint32_t HighBit32(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(v);
#else
  return 31 - __builtin_clz(v);
#endif
}

ZARRD_HD inline uint32_t PopCount32(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __popc(v);
#else
  return __builtin_popcount(v);
#endif
}

// Index of the lowest set bit; v must not be 0.
ZARRD_HD inline uint32_t LowBit32(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __ffs(v) - 1;
#else
  return __builtin_ctz(v);
#endif
}

// The 8 bytes at src[pos..pos+8) as a little-endian word, zeros where they pass `size`.
ZARRD_HD inline uint64_t LoadPadded(const uint8_t* src, uint64_t size, uint64_t pos) {
  if (pos + 8 <= size) return ReadLE64(src + pos);
  uint64_t v = 0;
  for (uint64_t i = 0; i < 8 && pos + i < size; ++i) v |= uint64_t(src[pos + i]) << (8 * i);
  return v;
}

// Bits [at, at + n) of the little-endian bit string src[0..size), n <= 56; bits below 0 and at or
// above 8 * size read as zero.
ZARRD_HD inline uint64_t BitsAt(const uint8_t* src, uint64_t size, int64_t at, uint32_t n) {
  const int64_t end = at + int64_t(n);
  if (n == 0 || end <= 0) return 0;
  uint32_t shift = 0;
  if (at < 0) {
    shift = uint32_t(-at);
    n = uint32_t(end);
    at = 0;
  }
  const uint64_t word = LoadPadded(src, size, uint64_t(at) >> 3) >> (at & 7);
  return (word & ((uint64_t(1) << n) - 1)) << shift;
}

// Reads the FSE table descriptions, least significant bit first.
class ForwardBitReader {
 public:
  ZARRD_HD ForwardBitReader(const uint8_t* src, uint64_t size) : src_(src), size_(size) {}
  ZARRD_HD uint32_t Peek(uint32_t n) const { return uint32_t(BitsAt(src_, size_, pos_, n)); }
  ZARRD_HD void Skip(uint32_t n) { pos_ += n; }
  ZARRD_HD uint32_t Read(uint32_t n) {
    const uint32_t v = Peek(n);
    pos_ += n;
    return v;
  }
  // Whole bytes read so far, counting a partly read byte; may exceed the size when the
  // description ran past its end.
  ZARRD_HD uint64_t BytesUsed() const { return (uint64_t(pos_) + 7) / 8; }

 private:
  const uint8_t* src_;
  uint64_t size_;
  int64_t pos_ = 0;
};

// The high word of (hi:lo) << n, n < 32: one instruction on the GPU.
ZARRD_HD inline uint32_t FunnelLeft(uint32_t lo, uint32_t hi, uint32_t n) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_l(lo, hi, n);
#else
  return uint32_t(((uint64_t(hi) << 32 | lo) << n) >> 32);
#endif
}

// v << n, n <= 32 (0 at 32).
ZARRD_HD inline uint32_t ShiftLeftUpTo32(uint32_t v, uint32_t n) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_lc(0, v, n);
#else
  return n >= 32 ? 0 : v << n;
#endif
}

// Reads a stream written forwards and read backwards: from the bit under the end marker (the
// highest set bit of the last byte) down to bit 0 of the first byte. The next bits are at the
// top of a 64-bit window, kept as two words so that a read is a few 32-bit funnel shifts on the
// GPU; a read that needs more than the window holds first loads the 4-byte group under it, a
// group whose address is a multiple of 4, in one aligned load when the group lies inside the
// stream (on the GPU one instruction, where an unaligned 8-byte load is eight). The groups at the
// stream's two ends are read byte by byte, so no byte outside the stream is read; bits under the
// start read as zero.
class BackwardBitReader {
 public:
  static constexpr uint64_t kMaxBytes = uint64_t(1) << 27;

  // False when the stream is empty, longer than kMaxBytes or its last byte holds no end marker.
  ZARRD_HD bool Init(const uint8_t* src, uint64_t size) {
    src_ = src;
    size_ = uint32_t(size);
    if (size == 0 || size > kMaxBytes || src[size - 1] == 0) return false;
    const int32_t skew = int32_t(reinterpret_cast<uintptr_t>(src) & 3);
    const int32_t top = ((int32_t(size) - 1 + skew) & ~3) - skew;  // the group of the marker
    const int32_t bits = 8 * (int32_t(size) - 1 - top) + int32_t(HighBit32(src[size - 1]));
    hi_ = bits == 0 ? 0 : EdgeGroup(top) << (32 - bits);
    lo_ = 0;
    avail_ = bits;
    next_ = top - 4;
    return true;
  }
  // The next n bits, n <= 31.
  ZARRD_HD uint32_t Peek(uint32_t n) {
    Ensure(n);
    return PeekLoaded(n);
  }
  // Makes the next n bits (n <= 32) readable by ReadLoaded.
  ZARRD_HD void Ensure(uint32_t n) {
    if (avail_ < int32_t(n)) Refill();
  }
  // The next n bits (n <= 31) of those the last Ensure made readable.
  ZARRD_HD uint32_t PeekLoaded(uint32_t n) const { return FunnelLeft(hi_, 0, n); }
  // Reads n bits (n <= 31) of those the last Ensure made readable.
  ZARRD_HD uint32_t ReadLoaded(uint32_t n) {
    const uint32_t v = PeekLoaded(n);
    Skip(n);
    return v;
  }
  // Consumes n bits (n <= 31), at most as many as the last Ensure made readable.
  ZARRD_HD void Skip(uint32_t n) {
    hi_ = FunnelLeft(lo_, hi_, n);
    lo_ <<= n;
    avail_ -= int32_t(n);
  }
  ZARRD_HD uint32_t Read(uint32_t n) {
    const uint32_t v = Peek(n);
    Skip(n);
    return v;
  }
  // Bits not yet read; negative once more bits were read than the stream holds.
  ZARRD_HD int64_t BitsLeft() const { return 8 * int64_t(next_ + 4) + avail_; }

 private:
  // Puts the group at next_ under the window's avail_ bits (fewer than 32).
  ZARRD_HD void Refill() {
    const uint32_t group = next_ >= 0 ? InnerGroup(next_) : EdgeGroup(next_);
    hi_ |= group >> avail_;
    lo_ |= ShiftLeftUpTo32(group, 32 - uint32_t(avail_));
    avail_ += 32;
    next_ -= 4;
  }
  // The aligned group of bytes [at, at + 4), all inside the stream.
  ZARRD_HD uint32_t InnerGroup(int32_t at) const {
#if defined(__CUDA_ARCH__)
    return *reinterpret_cast<const uint32_t*>(src_ + at);
#else
    return ReadLE32(src_ + at);
#endif
  }
  // Bytes [at, at + 4) with zeros for those outside the stream.
  ZARRD_HD uint32_t EdgeGroup(int32_t at) const {
    uint32_t v = 0;
    for (int32_t i = 0; i < 4; ++i) {
      if (at + i >= 0 && uint32_t(at + i) < size_) v |= uint32_t(src_[at + i]) << (8 * i);
    }
    return v;
  }

  const uint8_t* src_ = nullptr;
  uint32_t size_ = 0;
  int32_t avail_ = 0;  // bits at the top of the window not yet read
  int32_t next_ = 0;   // the offset of the group under them (negative under the stream's start)
  uint32_t hi_ = 0, lo_ = 0;  // the window: its next bit is bit 31 of hi_
};

}  // namespace zarrd::decode::zstd
