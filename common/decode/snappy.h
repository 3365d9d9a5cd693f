// Snappy's raw format (what blosc's snappy codec writes in each split), decoded into an output of
// exactly the size the container states.
//
// Format: a varint of the uncompressed length, then elements by the low two bits of a tag byte:
// 0 a literal (length - 1 in the tag's upper six bits, or in 1-4 little-endian bytes for 60-63),
// 1 a copy of 4-11 bytes with an 11-bit offset, 2 and 3 copies of 1-64 bytes with a 16-bit or
// 32-bit offset.
//
// Bounds: the stated length must equal the output's size; every element is checked against the
// input left and the output left; offsets must be nonzero and reach no further than the output's
// start, as libsnappy's decompressor requires.
//
// Parallel split: as in lz4_block.h, every lane parses, the copies are split across lanes.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/lanes.h"

namespace zarrd::decode {

template <typename Lanes = SerialLanes>
ZARRD_HD inline DecodeError DecodeSnappy(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                         uint64_t dst_size, uint64_t* written,
                                         const Lanes& lanes = Lanes()) {
  uint64_t ip = 0, op = 0, stated = 0;
  *written = 0;
  for (uint32_t shift = 0;; shift += 7) {
    if (ip >= src_size) return DecodeError::kTruncated;
    if (shift > 28) return DecodeError::kCorrupt;
    const uint8_t b = src[ip++];
    stated |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) break;
  }
  if (stated > 0xffffffffu) return DecodeError::kCorrupt;
  if (stated > dst_size) return DecodeError::kOutputOverrun;
  while (ip < src_size) {
    const uint8_t tag = src[ip++];
    uint64_t len, offset = 0;
    if ((tag & 3) == 0) {
      len = tag >> 2;
      if (len >= 60) {
        const uint64_t bytes = len - 59;
        if (src_size - ip < bytes) return DecodeError::kTruncated;
        len = 0;
        for (uint64_t k = 0; k < bytes; ++k) len |= uint64_t{src[ip + k]} << (8 * k);
        ip += bytes;
      }
      len += 1;
      if (len > src_size - ip) return DecodeError::kTruncated;
      if (len > stated - op) return DecodeError::kOutputOverrun;
      LaneCopy(lanes, dst + op, src + ip, len);
      ip += len;
      op += len;
      continue;
    }
    const uint64_t offset_bytes = (tag & 3) == 1 ? 1 : (tag & 3) == 2 ? 2 : 4;
    if (src_size - ip < offset_bytes) return DecodeError::kTruncated;
    if ((tag & 3) == 1) {
      len = ((tag >> 2) & 7) + 4;
      offset = static_cast<uint64_t>(tag >> 5) << 8 | src[ip];
    } else {
      len = (tag >> 2) + 1;
      for (uint64_t k = 0; k < offset_bytes; ++k) offset |= uint64_t{src[ip + k]} << (8 * k);
    }
    ip += offset_bytes;
    if (offset == 0 || offset > op) return DecodeError::kCorrupt;
    if (len > stated - op) return DecodeError::kOutputOverrun;
    lanes.Sync();
    LaneMatch(lanes, dst, op, offset, len);
    op += len;
    lanes.Sync();
  }
  lanes.Sync();
  *written = op;
  if (op != stated) return DecodeError::kTruncated;
  return op == dst_size ? DecodeError::kOk : DecodeError::kOutputShort;
}

}  // namespace zarrd::decode
