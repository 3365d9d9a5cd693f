// The LZ4 block format (what blosc's lz4 and lz4hc codecs write in each split), decoded into an
// output of exactly the size the container states.
//
// Bounds: every length is checked against the input bytes left before it is read and against the
// output bytes left before it is written; a match may not reach before the output's start. The
// end-of-block rules are liblz4's (LZ4_decompress_safe): the last sequence is literals only and
// ends the input exactly, other sequences' literals leave at least 12 output and 8 input bytes,
// a match leaves at least 5 output bytes, and 255-continued lengths leave 15 (literal) or 4
// (match) input bytes. Offset 0 is rejected.
//
// Parallel split: every lane of `Lanes` parses the same sequence; the literal and match copies
// are split across lanes (lanes.h), with a Sync between sequences.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/lanes.h"

namespace zarrd::decode {

namespace lz4 {
constexpr uint64_t kMinMatch = 4;
constexpr uint64_t kLastLiterals = 5;
constexpr uint64_t kMfLimit = 12;

// Adds LZ4's 255-continued length bytes to *len. The input must keep at least `reserve` bytes
// after each one (liblz4 1.9's read_variable_length limits).
ZARRD_HD inline bool ReadLength(const uint8_t* src, uint64_t src_size, uint64_t* ip,
                                uint64_t reserve, uint64_t* len) {
  for (;;) {
    if (*ip >= src_size) return false;
    const uint8_t b = src[(*ip)++];
    *len += b;
    if (src_size - *ip < reserve) return false;
    if (b != 255) return true;
  }
}
}  // namespace lz4

template <typename Lanes = SerialLanes>
ZARRD_HD inline DecodeError DecodeLz4Block(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                           uint64_t dst_size, uint64_t* written,
                                           const Lanes& lanes = Lanes()) {
  using namespace lz4;
  uint64_t ip = 0, op = 0;
  *written = 0;
  if (src_size == 0) return DecodeError::kTruncated;
  for (;;) {
    const uint8_t token = src[ip++];
    uint64_t lit = token >> 4;
    if (lit == 15) {
      // liblz4 wants more than 15 input bytes before the length bytes, 15 after each.
      if (src_size - ip <= 15) return DecodeError::kCorrupt;
      if (!ReadLength(src, src_size, &ip, 15, &lit)) return DecodeError::kCorrupt;
    }
    const uint64_t in_left = src_size - ip;
    if (lit > in_left) return DecodeError::kTruncated;
    if (lit > dst_size - op) return DecodeError::kOutputOverrun;
    const bool last = dst_size - op - lit < kMfLimit || in_left - lit < 2 + 1 + kLastLiterals;
    LaneCopy(lanes, dst + op, src + ip, lit);
    ip += lit;
    op += lit;
    if (last) {
      lanes.Sync();
      *written = op;
      if (ip != src_size) return DecodeError::kCorrupt;
      return op == dst_size ? DecodeError::kOk : DecodeError::kOutputShort;
    }
    const uint64_t offset = uint64_t{src[ip]} | uint64_t{src[ip + 1]} << 8;
    ip += 2;
    if (offset == 0 || offset > op) return DecodeError::kCorrupt;
    uint64_t len = token & 15;
    if (len == 15 && !ReadLength(src, src_size, &ip, kLastLiterals - 1, &len)) {
      return DecodeError::kCorrupt;
    }
    len += kMinMatch;
    if (len > dst_size - op || dst_size - op - len < kLastLiterals) {
      return DecodeError::kOutputOverrun;
    }
    lanes.Sync();  // the match may read literals other lanes just wrote
    LaneMatch(lanes, dst, op, offset, len);
    op += len;
    lanes.Sync();
  }
}

}  // namespace zarrd::decode
