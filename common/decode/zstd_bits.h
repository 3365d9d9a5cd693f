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

// Reads a stream written forwards and read backwards: from the bit under the end marker (the
// highest set bit of the last byte) down to bit 0 of the first byte. Keeps the next 57 to 64 bits
// of the stream at the top of a 64-bit window, reloaded (8 byte loads) when a read needs more;
// positions are 32-bit (streams are at most a block, 128 KiB) so that a read costs a few
// instructions on the GPU.
class BackwardBitReader {
 public:
  static constexpr uint64_t kMaxBytes = uint64_t(1) << 27;

  // False when the stream is empty, longer than kMaxBytes or its last byte holds no end marker.
  ZARRD_HD bool Init(const uint8_t* src, uint64_t size) {
    src_ = src;
    size_ = size;
    if (size == 0 || size > kMaxBytes || src[size - 1] == 0) return false;
    pos_ = int32_t(8 * (size - 1) + HighBit32(src[size - 1]));
    Reload();
    return true;
  }
  // The next n bits, n <= 31.
  ZARRD_HD uint32_t Peek(uint32_t n) {
    Ensure(n);
    return (uint32_t(window_ >> 32) >> 1) >> (31 - n);
  }
  // Makes the next n bits (n <= 57) readable by ReadLoaded.
  ZARRD_HD void Ensure(uint32_t n) {
    if (pos_ - int32_t(n) < floor_) Reload();
  }
  // Reads n bits (n <= 31) of those the last Ensure made readable.
  ZARRD_HD uint32_t ReadLoaded(uint32_t n) {
    const uint32_t v = (uint32_t(window_ >> 32) >> 1) >> (31 - n);
    Skip(n);
    return v;
  }
  // Consumes n bits, at most as many as the last Peek looked at.
  ZARRD_HD void Skip(uint32_t n) {
    window_ <<= n;
    pos_ -= int32_t(n);
  }
  ZARRD_HD uint32_t Read(uint32_t n) {
    const uint32_t v = Peek(n);
    Skip(n);
    return v;
  }
  // Bits not yet read; negative once more bits were read than the stream holds.
  ZARRD_HD int64_t BitsLeft() const { return pos_; }

 private:
  // Puts bit pos_ - 1 at the top of the window, the bits under it below (zeros under the
  // stream's start), and sets floor_, the position of the lowest bit loaded.
  ZARRD_HD void Reload() {
    if (pos_ <= 0) {
      window_ = 0;
      floor_ = pos_ - 64;
      return;
    }
    const int32_t top = (pos_ - 1) >> 3;  // the byte that holds bit pos_ - 1
    const int32_t first = top - 7;
    const uint64_t word = first >= 0 ? LoadPadded(src_, size_, uint64_t(first))
                                     : LoadPadded(src_, size_, 0) << (8 * -first);
    const uint32_t shift = uint32_t(63 - (pos_ - 1 - 8 * first));  // 0 to 7
    window_ = word << shift;
    floor_ = pos_ - int32_t(64 - shift);
  }

  const uint8_t* src_ = nullptr;
  uint64_t size_ = 0;
  int32_t pos_ = 0;
  int32_t floor_ = 0;
  uint64_t window_ = 0;
};

}  // namespace zarrd::decode::zstd
