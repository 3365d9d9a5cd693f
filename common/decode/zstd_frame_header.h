// The frame header of zstd (RFC 8878 3.1.1.1) and the magic numbers that start frames.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"

namespace zarrd::decode::zstd {

constexpr uint32_t kMagic = 0xFD2FB528u;
constexpr uint32_t kSkippableMagic = 0x184D2A50u;  // low 4 bits free
constexpr uint32_t kSkippableMask = 0xFFFFFFF0u;
constexpr uint32_t kWindowLogMax = 31;

struct FrameHeader {
  bool has_content_size = false;
  bool has_checksum = false;
  uint64_t content_size = 0;
};

// Reads the header of the frame at src[0..size) (its magic number already checked); sets the
// bytes it took.
ZARRD_HD inline DecodeError ReadFrameHeader(const uint8_t* src, uint64_t size, FrameHeader* h,
                                            uint64_t* used) {
  if (size < 5) return DecodeError::kTruncated;
  const uint32_t descriptor = src[4];
  const uint32_t fcs_flag = descriptor >> 6;
  const bool single_segment = (descriptor >> 5) & 1;
  h->has_checksum = (descriptor >> 2) & 1;
  const uint32_t dict_flag = descriptor & 3;
  if (descriptor & 0x08) return DecodeError::kCorrupt;  // reserved bit
  const uint32_t dict_bytes = dict_flag == 3 ? 4 : dict_flag;
  const uint32_t fcs_bytes = fcs_flag == 0 ? (single_segment ? 1 : 0) : 1u << fcs_flag;
  uint64_t pos = 5;
  const uint64_t header_end = pos + (single_segment ? 0 : 1) + dict_bytes + fcs_bytes;
  if (header_end > size) return DecodeError::kTruncated;
  if (!single_segment) {
    if (uint32_t(src[pos] >> 3) + 10 > kWindowLogMax) return DecodeError::kCorrupt;
    ++pos;
  }
  uint32_t dict_id = 0;
  for (uint32_t i = 0; i < dict_bytes; ++i) dict_id |= uint32_t(src[pos + i]) << (8 * i);
  pos += dict_bytes;
  if (dict_id != 0) return DecodeError::kUnsupported;
  uint64_t content_size = 0;
  for (uint32_t i = 0; i < fcs_bytes; ++i) content_size |= uint64_t(src[pos + i]) << (8 * i);
  if (fcs_bytes == 2) content_size += 256;
  pos += fcs_bytes;
  h->has_content_size = fcs_bytes > 0;
  h->content_size = content_size;
  *used = pos;
  return DecodeError::kOk;
}

}  // namespace zarrd::decode::zstd
