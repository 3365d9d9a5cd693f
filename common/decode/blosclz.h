// blosclz, c-blosc's own LZ77 codec (format of c-blosc 1.x, blosclz 2.x), decoded into an output
// of exactly the size the container states.
//
// Format: the first byte's low 5 bits are a literal count - 1. Each later control byte `c` is
// either a literal run (c < 32: c + 1 bytes follow) or a match: length (c >> 5) + 2, extended by
// 255-continued bytes when c >> 5 is 7; distance ((c & 31) << 8) + next byte + 1, or, when that
// is 31 * 256 + 255 + 1, 8192 + a big-endian 16-bit value. The block ends where the input ends.
//
// Bounds and edge cases follow c-blosc's blosclz_decompress so that both accept the same inputs:
// a match needs two more input bytes after its length bytes, an input that ends right after a
// match's header ends the block without that match, copies never pass the output's end and a
// match never reaches before the output's start.
//
// Parallel split: as in lz4_block.h, every lane parses, the copies are split across lanes.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/lanes.h"

namespace zarrd::decode {

template <typename Lanes = SerialLanes>
ZARRD_HD inline DecodeError DecodeBlosclz(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                          uint64_t dst_size, uint64_t* written,
                                          const Lanes& lanes = Lanes()) {
  constexpr uint64_t kMaxDistance = 8191;
  uint64_t ip = 0, op = 0;
  *written = 0;
  if (src_size == 0) return DecodeError::kTruncated;
  uint32_t ctrl = src[ip++] & 31u;
  for (;;) {
    if (ctrl >= 32) {
      uint64_t len = (ctrl >> 5) - 1;
      uint64_t distance = uint64_t{ctrl & 31u} << 8;
      if (len == 6) {
        uint8_t code;
        do {
          if (ip + 1 >= src_size) return DecodeError::kTruncated;
          code = src[ip++];
          len += code;
        } while (code == 255);
      } else if (ip + 1 >= src_size) {
        return DecodeError::kTruncated;
      }
      const uint8_t code = src[ip++];
      len += 3;
      distance += code;
      if (code == 255 && distance == (31u << 8) + 255) {
        if (ip + 1 >= src_size) return DecodeError::kTruncated;
        distance = (uint64_t{src[ip]} << 8 | src[ip + 1]) + kMaxDistance;
        ip += 2;
      }
      distance += 1;
      if (len > dst_size - op) return DecodeError::kOutputOverrun;
      if (distance > op) return DecodeError::kCorrupt;
      if (ip >= src_size) break;
      ctrl = src[ip++];
      lanes.Sync();
      LaneMatch(lanes, dst, op, distance, len);
      op += len;
      lanes.Sync();
    } else {
      const uint64_t lit = uint64_t{ctrl} + 1;
      if (lit > dst_size - op) return DecodeError::kOutputOverrun;
      if (lit > src_size - ip) return DecodeError::kTruncated;
      LaneCopy(lanes, dst + op, src + ip, lit);
      op += lit;
      ip += lit;
      if (ip >= src_size) break;
      ctrl = src[ip++];
    }
  }
  lanes.Sync();
  *written = op;
  return op == dst_size ? DecodeError::kOk : DecodeError::kOutputShort;
}

}  // namespace zarrd::decode
