// The blosc 1 container (format version 2, as c-blosc 1.x, numcodecs and tensorstore write it).
//
// Layout: a 16-byte header (version 2, codec version, flags, typesize, then little-endian
// nbytes, blocksize, cbytes), then either nbytes raw bytes (the memcpyed flag) or one 32-bit start
// offset per block followed by the blocks. A block of `size` bytes holds `typesize` splits of
// size / typesize bytes when typesize <= 16, size / typesize >= 128, the block is not the short
// last one and the no-split flag is clear; else one split. Each split is a 32-bit compressed size
// and that many bytes: a copy when it equals the split's size, else blosclz, lz4 (lz4hc), snappy,
// zlib or zstd data. The block is then byte-unshuffled or bit-unshuffled (shuffle.h).
//
// Bounds: ParseBlosc1 checks the header against the input (cbytes must be its size) and output
// sizes and the start table against cbytes; DecodeBlosc1Block checks every split's offset and size
// against cbytes before reading it. The acceptance rules are c-blosc's (blosc_d), so both accept
// the same containers.
//
// Parallel split: blocks are independent. A batched kernel parses the header once per chunk and
// decodes each block with its own warp (Lanes) into scratch, then unshuffles the block into the
// output; lz4, blosclz and snappy splits use all lanes, zlib splits run on lane 0.
//
// zstd splits go through the `Zstd` seam: a callable
//   DecodeError (const uint8_t* src, uint64_t src_size, uint8_t* dst, uint64_t dst_size,
//                uint64_t* written)
// that must fill dst exactly. Every lane calls it, and it answers the same in each (the GPU's
// runs zstd_decode.h's frame decoder on the warp). NoZstd answers kUnsupported.
#pragma once

#include <cstdint>

#include "common/decode/blosclz.h"
#include "common/decode/deflate.h"
#include "common/decode/host_device.h"
#include "common/decode/lanes.h"
#include "common/decode/lz4_block.h"
#include "common/decode/shuffle.h"
#include "common/decode/snappy.h"

namespace zarrd::decode {

enum class BloscCodec : uint8_t { kBlosclz = 0, kLz4 = 1, kSnappy = 2, kZlib = 3, kZstd = 4 };

struct Blosc1Header {
  uint8_t flags = 0;
  uint32_t typesize = 0;
  uint64_t nbytes = 0;
  uint64_t blocksize = 0;
  uint64_t cbytes = 0;
  uint64_t nblocks = 0;
  BloscCodec codec = BloscCodec::kBlosclz;
  bool memcpyed = false;
};

struct NoZstd {
  ZARRD_HD DecodeError operator()(const uint8_t*, uint64_t, uint8_t*, uint64_t, uint64_t*) const {
    return DecodeError::kUnsupported;
  }
};

namespace blosc1 {
constexpr uint64_t kHeaderSize = 16;
constexpr uint8_t kShuffleFlag = 0x1, kMemcpyedFlag = 0x2, kBitshuffleFlag = 0x4, kFutureFlag = 0x8,
                  kNoSplitFlag = 0x10;
constexpr uint32_t kMaxSplits = 16;
constexpr uint64_t kMinSplitElements = 128;
constexpr uint64_t kMaxBlocksize = (0x7fffffffu - 255 * 4) / 3;  // c-blosc's BLOSC_MAX_BLOCKSIZE

ZARRD_HD inline uint64_t Le32(const uint8_t* p) {
  return uint64_t{p[0]} | uint64_t{p[1]} << 8 | uint64_t{p[2]} << 16 | uint64_t{p[3]} << 24;
}
}  // namespace blosc1

// Validates the header and the block start table: `src_size` input bytes decoding into exactly
// `dst_size` bytes.
ZARRD_HD inline DecodeError ParseBlosc1(const uint8_t* src, uint64_t src_size, uint64_t dst_size,
                                        Blosc1Header* h) {
  using namespace blosc1;
  if (src_size < kHeaderSize) return DecodeError::kTruncated;
  h->flags = src[2];
  h->typesize = src[3];
  h->nbytes = Le32(src + 4);
  h->blocksize = Le32(src + 8);
  h->cbytes = Le32(src + 12);
  h->memcpyed = (h->flags & kMemcpyedFlag) != 0;
  h->codec = static_cast<BloscCodec>(h->flags >> 5);
  h->nblocks = 0;
  // As blosc_cbuffer_validate (which zarrd's CPU path calls): a format other than 2 has no sizes
  // (c-blosc 1.21), and the container is the whole input.
  if (src[0] != 2) return DecodeError::kCorrupt;
  if (h->cbytes > src_size) return DecodeError::kTruncated;
  if (h->cbytes < src_size || h->nbytes > 0x7fffffffu - kHeaderSize) return DecodeError::kCorrupt;
  if (h->nbytes > dst_size) return DecodeError::kOutputOverrun;
  if (h->nbytes < dst_size) return DecodeError::kOutputShort;
  if (h->nbytes == 0) return DecodeError::kOk;  // c-blosc reads nothing else of an empty buffer
  if ((h->flags & kFutureFlag) != 0) return DecodeError::kCorrupt;
  if (h->blocksize == 0 || h->blocksize > h->nbytes || h->typesize == 0 ||
      h->blocksize > kMaxBlocksize) {
    return DecodeError::kCorrupt;
  }
  h->nblocks = (h->nbytes + h->blocksize - 1) / h->blocksize;
  if (h->memcpyed) {
    return h->cbytes == h->nbytes + kHeaderSize ? DecodeError::kOk : DecodeError::kCorrupt;
  }
  if (static_cast<uint8_t>(h->codec) > 4 || src[1] != 1) return DecodeError::kCorrupt;
  if (h->nblocks > (h->cbytes - kHeaderSize) / 4) return DecodeError::kTruncated;
  return DecodeError::kOk;
}

// Bytes of block `b` (the last one may be short).
ZARRD_HD inline uint64_t Blosc1BlockSize(const Blosc1Header& h, uint64_t b) {
  const uint64_t start = b * h.blocksize;
  return h.nbytes - start < h.blocksize ? h.nbytes - start : h.blocksize;
}

namespace blosc1 {
template <typename Lanes, typename Zstd>
ZARRD_HD inline DecodeError DecodeSplit(const Blosc1Header& h, const uint8_t* src, uint64_t size,
                                        uint8_t* dst, uint64_t dst_size, const Lanes& lanes,
                                        const Zstd& zstd) {
  uint64_t written = 0;
  DecodeError e = DecodeError::kUnsupported;
  switch (h.codec) {
    case BloscCodec::kLz4:
      e = DecodeLz4Block(src, size, dst, dst_size, &written, lanes);
      break;
    case BloscCodec::kBlosclz:
      e = DecodeBlosclz(src, size, dst, dst_size, &written, lanes);
      break;
    case BloscCodec::kZlib: {
      InflateWorkspace ws;  // only lane 0's is used
      e = DecodeZlib(src, size, dst, dst_size, &written, &ws, lanes);
      break;
    }
    case BloscCodec::kZstd:
      e = zstd(src, size, dst, dst_size, &written);
      if (e == DecodeError::kOk && written != dst_size) e = DecodeError::kOutputShort;
      lanes.Sync();
      break;
    case BloscCodec::kSnappy:
      e = DecodeSnappy(src, size, dst, dst_size, &written, lanes);
      break;
  }
  return e;
}
}  // namespace blosc1

// Decodes block `b` of a container that ParseBlosc1 accepted into `dst` (the output's bytes of
// that block, Blosc1BlockSize of them), using `scratch` (as many bytes) when it is shuffled.
template <typename Lanes = SerialLanes, typename Zstd = NoZstd>
ZARRD_HD inline DecodeError DecodeBlosc1Block(const Blosc1Header& h, const uint8_t* src, uint64_t b,
                                              uint8_t* dst, uint8_t* scratch,
                                              const Lanes& lanes = Lanes(),
                                              const Zstd& zstd = Zstd()) {
  using namespace blosc1;
  const uint64_t size = Blosc1BlockSize(h, b);
  if (h.memcpyed) {
    LaneCopy(lanes, dst, src + kHeaderSize + b * h.blocksize, size);
    lanes.Sync();
    return DecodeError::kOk;
  }
  const bool leftover = size < h.blocksize;
  const bool shuffle = (h.flags & kShuffleFlag) != 0 && h.typesize > 1;
  const bool bitshuffle = !shuffle && (h.flags & kBitshuffleFlag) != 0 && size >= h.typesize;
  const uint64_t nsplits = (h.flags & kNoSplitFlag) == 0 && h.typesize <= kMaxSplits &&
                                   size / h.typesize >= kMinSplitElements && !leftover
                               ? h.typesize
                               : 1;
  if (size % nsplits != 0) return DecodeError::kCorrupt;
  const uint64_t split_size = size / nsplits;
  uint8_t* out = shuffle || bitshuffle ? scratch : dst;
  uint64_t at = Le32(src + kHeaderSize + 4 * b);
  for (uint64_t s = 0; s < nsplits; ++s) {
    if (at < kHeaderSize || at > h.cbytes - 4) return DecodeError::kTruncated;
    const uint64_t csize = Le32(src + at);
    at += 4;
    if (csize > h.cbytes - at) return DecodeError::kTruncated;
    if (csize == split_size) {
      LaneCopy(lanes, out + s * split_size, src + at, split_size);
    } else {
      const DecodeError e =
          DecodeSplit(h, src + at, csize, out + s * split_size, split_size, lanes, zstd);
      if (e != DecodeError::kOk) return e;
    }
    at += csize;
  }
  lanes.Sync();
  if (shuffle) Unshuffle(scratch, size, h.typesize, dst, lanes);
  if (bitshuffle) Bitunshuffle(scratch, size, h.typesize, dst, lanes);
  lanes.Sync();
  return DecodeError::kOk;
}

// The whole container on one thread. `scratch` holds at least min(blocksize, dst_size) bytes.
template <typename Zstd = NoZstd>
ZARRD_HD inline DecodeError DecodeBlosc1(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                         uint64_t dst_size, uint8_t* scratch, uint64_t* written,
                                         const Zstd& zstd = Zstd()) {
  *written = 0;
  Blosc1Header h;
  DecodeError e = ParseBlosc1(src, src_size, dst_size, &h);
  if (e != DecodeError::kOk) return e;
  for (uint64_t b = 0; b < h.nblocks; ++b) {
    e = DecodeBlosc1Block(h, src, b, dst + b * h.blocksize, scratch, SerialLanes(), zstd);
    if (e != DecodeError::kOk) return e;
    *written += Blosc1BlockSize(h, b);
  }
  return DecodeError::kOk;
}

}  // namespace zarrd::decode
