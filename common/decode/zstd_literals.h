// The literals section of a compressed block (RFC 8878 3.1.1.3.1): raw literals are used in place,
// RLE literals are expanded into the workspace by all lanes, Huffman literals are decoded into it
// with the table read on lane 0 (or the frame's previous table for treeless literals) and, for
// four streams, one stream per lane on lanes 0-3. The decoding table is in ZstdTables (shared
// memory on the GPU), the literals in the workspace.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"
#include "common/decode/zstd_huffman.h"
#include "common/decode/zstd_workspace.h"

namespace zarrd::decode::zstd {

struct Literals {
  const uint8_t* data = nullptr;
  uint32_t size = 0;
};

template <class L>
ZARRD_HD DecodeError DecodeHuffmanLiterals(const uint8_t* src, uint64_t size, uint32_t count,
                                           bool four_streams, ZstdWorkspace* ws,
                                           const ZstdTables* t, const L& lanes) {
  const uint32_t log = t->huf_log;
  if (!four_streams) {
    bool ok = true;
    if (lanes.Leader()) ok = DecodeHuffmanStream(t->huf, log, src, size, ws->literals, count);
    lanes.Sync();
    return lanes.Broadcast(uint64_t(ok)) ? DecodeError::kOk : DecodeError::kCorrupt;
  }
  if (size < 10) return DecodeError::kCorrupt;
  uint64_t stream_size[4] = {ReadLE16(src), ReadLE16(src + 2), ReadLE16(src + 4), 0};
  const uint64_t sum = 6 + stream_size[0] + stream_size[1] + stream_size[2];
  if (sum > size) return DecodeError::kCorrupt;
  stream_size[3] = size - sum;
  const uint32_t segment = (count + 3) / 4;
  if (3 * segment > count) return DecodeError::kCorrupt;
  bool ok = true;
  for (uint32_t s = lanes.lane; s < 4; s += lanes.count) {
    uint64_t begin = 6;
    for (uint32_t k = 0; k < s; ++k) begin += stream_size[k];
    const uint32_t n = s == 3 ? count - 3 * segment : segment;
    ok = ok && DecodeHuffmanStream(t->huf, log, src + begin, stream_size[s],
                                   ws->literals + s * segment, n);
  }
  lanes.Sync();
  return lanes.Any(!ok) ? DecodeError::kCorrupt : DecodeError::kOk;
}

// Reads the literals section at the start of a block's src[0..size); sets `out` and the bytes
// the section used. Called by all lanes.
template <class L>
ZARRD_HD DecodeError DecodeLiterals(const uint8_t* src, uint64_t size, ZstdWorkspace* ws,
                                    ZstdTables* t, const L& lanes, Literals* out, uint64_t* used) {
  if (size == 0) return DecodeError::kTruncated;
  const uint32_t type = src[0] & 3;
  const uint32_t format = (src[0] >> 2) & 3;
  if (type <= 1) {  // raw or RLE
    uint32_t header = 1;
    uint32_t count = src[0] >> 3;
    if (format == 1) {
      header = 2;
      if (size < 2) return DecodeError::kTruncated;
      count = ReadLE16(src) >> 4;
    } else if (format == 3) {
      header = 3;
      if (size < 3) return DecodeError::kTruncated;
      count = ReadLE24(src) >> 4;
    }
    if (count > kBlockMax) return DecodeError::kCorrupt;
    out->size = count;
    if (type == 0) {
      if (header + uint64_t(count) > size) return DecodeError::kTruncated;
      out->data = src + header;
      *used = header + uint64_t(count);
      return DecodeError::kOk;
    }
    if (header + 1 > size) return DecodeError::kTruncated;
    const uint8_t byte = src[header];
    for (uint32_t i = lanes.lane; i < count; i += lanes.count) ws->literals[i] = byte;
    lanes.Sync();
    out->data = ws->literals;
    *used = header + 1;
    return DecodeError::kOk;
  }
  // Huffman-coded, with a new table (2) or the previous one (3).
  const uint32_t header = format <= 1 ? 3 : format == 2 ? 4 : 5;
  if (size < header) return DecodeError::kTruncated;
  uint32_t count, compressed;
  if (header == 3) {
    const uint32_t h = ReadLE24(src);
    count = (h >> 4) & 0x3FF;
    compressed = (h >> 14) & 0x3FF;
  } else if (header == 4) {
    const uint32_t h = ReadLE32(src);
    count = (h >> 4) & 0x3FFF;
    compressed = h >> 18;
  } else {
    const uint32_t h = ReadLE32(src);
    count = (h >> 4) & 0x3FFFF;
    compressed = (h >> 22) + (uint32_t(src[4]) << 10);
  }
  if (count > kBlockMax) return DecodeError::kCorrupt;
  if (header + uint64_t(compressed) > size) return DecodeError::kTruncated;
  const uint8_t* p = src + header;
  uint64_t left = compressed;
  if (type == 2) {
    DecodeError e = DecodeError::kOk;
    uint64_t table_size = 0;
    if (lanes.Leader()) {
      uint32_t log = 0;
      e = ReadHuffmanTable(p, left, &ws->huf_scratch, t->huf, &log, &table_size);
      if (e == DecodeError::kOk) t->huf_log = log;
    }
    lanes.Sync();
    e = lanes.Broadcast(e);
    if (e != DecodeError::kOk) return e == DecodeError::kTruncated ? DecodeError::kCorrupt : e;
    table_size = lanes.Broadcast(table_size);
    p += table_size;
    left -= table_size;
  } else if (t->huf_log == 0) {
    return DecodeError::kCorrupt;
  }
  const DecodeError e = DecodeHuffmanLiterals(p, left, count, format != 0, ws, t, lanes);
  if (e != DecodeError::kOk) return e;
  out->data = ws->literals;
  out->size = count;
  *used = header + uint64_t(compressed);
  return DecodeError::kOk;
}

}  // namespace zarrd::decode::zstd
