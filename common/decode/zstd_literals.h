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

// The header of a literals section: its type (0 raw, 1 RLE, 2 Huffman, 3 Huffman with the
// previous table), the literal count, and the bytes of the header and of the payload after it
// (raw: the literals; RLE: the byte; Huffman: the tree description, if any, and the streams).
struct LiteralsHeader {
  uint32_t type = 0;
  bool four_streams = false;
  uint32_t header = 0;
  uint32_t count = 0;
  uint32_t payload = 0;
};

ZARRD_HD inline DecodeError ReadLiteralsHeader(const uint8_t* src, uint64_t size,
                                               LiteralsHeader* h) {
  if (size == 0) return DecodeError::kTruncated;
  h->type = src[0] & 3;
  const uint32_t format = (src[0] >> 2) & 3;
  if (h->type <= 1) {  // raw or RLE
    h->header = 1;
    h->count = src[0] >> 3;
    if (format == 1) {
      h->header = 2;
      if (size < 2) return DecodeError::kTruncated;
      h->count = ReadLE16(src) >> 4;
    } else if (format == 3) {
      h->header = 3;
      if (size < 3) return DecodeError::kTruncated;
      h->count = ReadLE24(src) >> 4;
    }
    h->four_streams = false;
    h->payload = h->type == 0 ? h->count : 1;
  } else {
    h->header = format <= 1 ? 3 : format == 2 ? 4 : 5;
    if (size < h->header) return DecodeError::kTruncated;
    if (h->header == 3) {
      const uint32_t v = ReadLE24(src);
      h->count = (v >> 4) & 0x3FF;
      h->payload = (v >> 14) & 0x3FF;
    } else if (h->header == 4) {
      const uint32_t v = ReadLE32(src);
      h->count = (v >> 4) & 0x3FFF;
      h->payload = v >> 18;
    } else {
      const uint32_t v = ReadLE32(src);
      h->count = (v >> 4) & 0x3FFFF;
      h->payload = (v >> 22) + (uint32_t(src[4]) << 10);
    }
    h->four_streams = format != 0;
  }
  if (h->count > kBlockMax) return DecodeError::kCorrupt;
  if (h->header + uint64_t(h->payload) > size) return DecodeError::kTruncated;
  return DecodeError::kOk;
}

// Decodes `count` literals from the Huffman streams src[0..size) with table[1 << log] into out.
// Called by all lanes.
template <class L>
ZARRD_HD DecodeError DecodeHuffmanLiterals(const uint8_t* src, uint64_t size, uint32_t count,
                                           bool four_streams, const HufEntry* table, uint32_t log,
                                           uint8_t* out, const L& lanes) {
  if (!four_streams) {
    bool ok = true;
    if (lanes.Leader()) ok = DecodeHuffmanStream(table, log, src, size, out, count);
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
    ok = ok && DecodeHuffmanStream(table, log, src + begin, stream_size[s], out + s * segment, n);
  }
  lanes.Sync();
  return lanes.Any(!ok) ? DecodeError::kCorrupt : DecodeError::kOk;
}

// Reads the literals section at the start of a block's src[0..size); sets `out` and the bytes
// the section used. Called by all lanes.
template <class L>
ZARRD_HD DecodeError DecodeLiterals(const uint8_t* src, uint64_t size, ZstdWorkspace* ws,
                                    ZstdTables* t, const L& lanes, Literals* out, uint64_t* used) {
  LiteralsHeader h;
  const DecodeError he = ReadLiteralsHeader(src, size, &h);
  if (he != DecodeError::kOk) return he;
  const uint8_t* p = src + h.header;
  out->size = h.count;
  *used = h.header + uint64_t(h.payload);
  if (h.type == 0) {
    out->data = p;
    return DecodeError::kOk;
  }
  if (h.type == 1) {
    for (uint32_t i = lanes.lane; i < h.count; i += lanes.count) ws->literals[i] = p[0];
    lanes.Sync();
    out->data = ws->literals;
    return DecodeError::kOk;
  }
  uint64_t left = h.payload;
  if (h.type == 2) {
    DecodeError e = DecodeError::kOk;
    uint64_t table_size = 0;
    if (lanes.Leader()) {
      uint32_t log = 0;
      e = ReadHuffmanTable(p, left, &ws->huf_scratch, &ws->weight_scratch, t->huf, &log,
                           &table_size);
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
  const DecodeError e = DecodeHuffmanLiterals(p, left, h.count, h.four_streams, t->huf, t->huf_log,
                                              ws->literals, lanes);
  if (e != DecodeError::kOk) return e;
  out->data = ws->literals;
  return DecodeError::kOk;
}

}  // namespace zarrd::decode::zstd
