// Huffman literals (RFC 8878 4.2): the tree description (weights given directly or as an FSE
// stream), the single-symbol decoding table it builds, and decoding of one literal stream.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"
#include "common/decode/zstd_fse.h"

namespace zarrd::decode::zstd {

constexpr uint32_t kHufMaxLog = 12;  // libzstd decodes up to 12; the RFC allows 11
constexpr uint32_t kHufWeightsMaxLog = 6;

struct HufEntry {
  uint8_t symbol;
  uint8_t nb_bits;
};

// Scratch for reading a tree description.
struct HufScratch {
  uint8_t weights[256];
  uint32_t rank_start[kHufMaxLog + 2];
};

// Scratch for decoding weights given as an FSE stream; done with before the decoding table is
// written, so it may share the table's memory.
struct WeightScratch {
  int16_t norm[256];
  uint16_t next[256];
  FseEntry fse[1 << kHufWeightsMaxLog];
};

// Weights as an FSE stream decoded with two interleaved states until the stream runs out.
ZARRD_HD inline DecodeError ReadFseWeights(const uint8_t* src, uint64_t size, HufScratch* s,
                                           WeightScratch* w, uint32_t* count) {
  uint32_t log;
  uint64_t used;
  const DecodeError e = ReadFseCounts(src, size, 255, kHufWeightsMaxLog, w->norm, &log, &used);
  if (e != DecodeError::kOk) return e;
  if (used >= size) return DecodeError::kCorrupt;
  BuildFseTable(w->norm, 255, log, nullptr, nullptr, w->fse, w->next);
  BackwardBitReader bits;
  if (!bits.Init(src + used, size - used)) return DecodeError::kCorrupt;
  uint32_t state1 = bits.Read(log);
  uint32_t state2 = bits.Read(log);
  uint32_t n = 0;
  for (;;) {
    if (n > 253) return DecodeError::kCorrupt;
    s->weights[n++] = uint8_t(w->fse[state1].base());
    state1 = w->fse[state1].next_state() + bits.Read(w->fse[state1].nb_bits());
    if (bits.BitsLeft() < 0) {
      s->weights[n++] = uint8_t(w->fse[state2].base());
      break;
    }
    if (n > 253) return DecodeError::kCorrupt;
    s->weights[n++] = uint8_t(w->fse[state2].base());
    state2 = w->fse[state2].next_state() + bits.Read(w->fse[state2].nb_bits());
    if (bits.BitsLeft() < 0) {
      s->weights[n++] = uint8_t(w->fse[state1].base());
      break;
    }
  }
  *count = n;
  return DecodeError::kOk;
}

// Reads the tree description at src and fills table[1 << *log]. Sets the bytes used.
ZARRD_HD inline DecodeError ReadHuffmanTable(const uint8_t* src, uint64_t size, HufScratch* s,
                                             WeightScratch* w, HufEntry* table, uint32_t* log,
                                             uint64_t* used) {
  if (size == 0) return DecodeError::kTruncated;
  const uint32_t header = src[0];
  uint32_t count = 0;  // weights given; the last symbol's weight is implied
  if (header < 128) {
    if (header + 1 > size) return DecodeError::kTruncated;
    const DecodeError e = ReadFseWeights(src + 1, header, s, w, &count);
    if (e != DecodeError::kOk) return e;
    *used = 1 + header;
  } else {
    count = header - 127;
    const uint32_t bytes = (count + 1) / 2;
    if (bytes + 1 > size) return DecodeError::kTruncated;
    for (uint32_t i = 0; i < count; ++i) {
      const uint8_t b = src[1 + i / 2];
      s->weights[i] = (i & 1) ? (b & 15) : (b >> 4);
    }
    *used = 1 + bytes;
  }
  uint32_t rank_count[kHufMaxLog + 2] = {};
  uint32_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (s->weights[i] > kHufMaxLog) return DecodeError::kCorrupt;
    ++rank_count[s->weights[i]];
    total += (1u << s->weights[i]) >> 1;
  }
  if (total == 0) return DecodeError::kCorrupt;
  const uint32_t table_log = HighBit32(total) + 1;
  if (table_log > kHufMaxLog) return DecodeError::kCorrupt;
  const uint32_t rest = (1u << table_log) - total;
  if (rest != (1u << HighBit32(rest))) return DecodeError::kCorrupt;
  const uint32_t last = HighBit32(rest) + 1;
  s->weights[count] = uint8_t(last);
  ++rank_count[last];
  if (rank_count[1] < 2 || (rank_count[1] & 1)) return DecodeError::kCorrupt;
  // Codes of weight 1 come first, then weight 2, ...; within a weight, by symbol.
  uint32_t start = 0;
  for (uint32_t w = 1; w <= table_log; ++w) {
    s->rank_start[w] = start;
    start += rank_count[w] << (w - 1);
  }
  for (uint32_t symbol = 0; symbol <= count; ++symbol) {
    const uint32_t w = s->weights[symbol];
    if (w == 0) continue;
    const uint32_t length = (1u << w) >> 1;
    const HufEntry entry{uint8_t(symbol), uint8_t(table_log + 1 - w)};
    for (uint32_t u = s->rank_start[w]; u < s->rank_start[w] + length; ++u) table[u] = entry;
    s->rank_start[w] += length;
  }
  *log = table_log;
  return DecodeError::kOk;
}

// Decodes exactly n literals from one stream, which must be consumed to its last bit.
ZARRD_HD inline bool DecodeHuffmanStream(const HufEntry* table, uint32_t log, const uint8_t* src,
                                         uint64_t size, uint8_t* out, uint64_t n) {
  BackwardBitReader bits;
  if (!bits.Init(src, size)) return false;
  // A stream read past its start stays so (the reader yields zeros there), so one check at the
  // end finds it.
  uint64_t i = 0;
  for (; i + 2 <= n; i += 2) {  // log <= 12: one refill serves two literals
    bits.Ensure(2 * log);
    const HufEntry a = table[bits.PeekLoaded(log)];
    bits.Skip(a.nb_bits);
    const HufEntry b = table[bits.PeekLoaded(log)];
    bits.Skip(b.nb_bits);
    out[i] = a.symbol;
    out[i + 1] = b.symbol;
  }
  if (i < n) {
    const HufEntry e = table[bits.Peek(log)];
    out[i] = e.symbol;
    bits.Skip(e.nb_bits);
  }
  return bits.BitsLeft() == 0;
}

}  // namespace zarrd::decode::zstd
