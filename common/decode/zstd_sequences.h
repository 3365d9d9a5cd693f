// The sequences section of a compressed block (RFC 8878 3.1.1.3.2): its header and the three FSE
// tables (predefined, RLE, compressed or repeated), decoding of the sequences on lane 0 in
// batches, and their execution by all lanes: literal copies and match copies split across lanes,
// with matches that overlap their own output (offset < length) read from the period before them.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"
#include "common/decode/zstd_fse.h"
#include "common/decode/zstd_workspace.h"

namespace zarrd::decode::zstd {

enum class Field { kLiteralLength, kOffset, kMatchLength };

// Baseline and extra bits of each code of a field (RFC 8878 3.1.1.3.2.1.1).
ZARRD_HD inline uint32_t FieldMaxSymbol(Field f) {
  return f == Field::kLiteralLength ? 35 : f == Field::kMatchLength ? 52 : 31;
}
ZARRD_HD inline void FieldValues(Field f, uint32_t* base, uint8_t* extra) {
  const uint32_t max = FieldMaxSymbol(f);
  for (uint32_t c = 0; c <= max; ++c) {
    if (f == Field::kOffset) {
      base[c] = 1u << c;
      extra[c] = uint8_t(c);
    } else if (f == Field::kLiteralLength) {
      extra[c] = c < 16 ? 0 : c < 20 ? 1 : c < 22 ? 2 : c < 24 ? 3 : c == 24 ? 4 : uint8_t(c - 19);
      base[c] = c <= 16 ? c : base[c - 1] + (1u << extra[c - 1]);
    } else {
      extra[c] = c < 32    ? 0
                 : c < 36  ? 1
                 : c < 38  ? 2
                 : c < 40  ? 3
                 : c < 42  ? 4
                 : c == 42 ? 5
                           : uint8_t(c - 36);
      base[c] = c <= 32 ? c + 3 : base[c - 1] + (1u << extra[c - 1]);
    }
  }
}

// The predefined distributions (RFC 8878 3.1.1.3.2.2).
ZARRD_HD inline uint32_t PredefinedCounts(Field f, int16_t* norm) {
  const int16_t ll[36] = {4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1,  1,  2,  2,
                          2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
  const int16_t ml[53] = {1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1,  1,  1,  1,  1,  1,  1, 1,
                          1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1,  1,  1,  1,  1,  1, 1,
                          1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
  const int16_t of[29] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1,  1,  1,  1,  1, 1,
                          1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};
  const int16_t* src = f == Field::kLiteralLength ? ll : f == Field::kMatchLength ? ml : of;
  const uint32_t n = f == Field::kLiteralLength ? 36 : f == Field::kMatchLength ? 53 : 29;
  for (uint32_t s = 0; s <= FieldMaxSymbol(f); ++s) norm[s] = s < n ? src[s] : 0;
  return f == Field::kOffset ? 5 : 6;
}

// Builds (or keeps, for the repeat mode) the table of one field from src; sets the bytes used.
ZARRD_HD inline DecodeError ReadSequenceTable(Field f, uint32_t mode, const uint8_t* src,
                                              uint64_t size, ZstdWorkspace* ws, uint64_t* used) {
  FseEntry* table = f == Field::kLiteralLength ? ws->ll
                    : f == Field::kMatchLength ? ws->ml
                                               : ws->of;
  uint32_t* log = f == Field::kLiteralLength ? &ws->ll_log
                  : f == Field::kMatchLength ? &ws->ml_log
                                             : &ws->of_log;
  const uint32_t max_log = f == Field::kOffset ? kOffsetLogMax : kMatchLogMax;
  const uint32_t max_symbol = FieldMaxSymbol(f);
  uint32_t base[53];
  uint8_t extra[53];
  FieldValues(f, base, extra);
  *used = 0;
  switch (mode) {
    case 0:
      *log = PredefinedCounts(f, ws->norm);
      BuildFseTable(ws->norm, max_symbol, *log, base, extra, table, ws->next);
      return DecodeError::kOk;
    case 1:
      if (size < 1) return DecodeError::kTruncated;
      if (src[0] > max_symbol) return DecodeError::kCorrupt;
      table[0] = FseEntry{base[src[0]], 0, 0, extra[src[0]]};
      *log = 0;
      *used = 1;
      return DecodeError::kOk;
    case 2: {
      const DecodeError e = ReadFseCounts(src, size, max_symbol, max_log, ws->norm, log, used);
      if (e != DecodeError::kOk) return DecodeError::kCorrupt;
      BuildFseTable(ws->norm, max_symbol, *log, base, extra, table, ws->next);
      return DecodeError::kOk;
    }
    default:
      return ws->fse_valid ? DecodeError::kOk : DecodeError::kCorrupt;
  }
}

// Reads the section header and tables (lane 0). Sets the sequence count and the bytes used.
ZARRD_HD inline DecodeError ReadSequencesHeader(const uint8_t* src, uint64_t size,
                                                ZstdWorkspace* ws, uint64_t* count,
                                                uint64_t* used) {
  if (size < 1) return DecodeError::kTruncated;
  uint64_t n = src[0];
  uint64_t pos = 1;
  if (n == 0) {
    *count = 0;
    *used = 1;
    return DecodeError::kOk;
  }
  if (n == 255) {
    if (size < 3) return DecodeError::kTruncated;
    n = ReadLE16(src + 1) + 0x7F00;
    pos = 3;
  } else if (n >= 128) {
    if (size < 2) return DecodeError::kTruncated;
    n = ((n - 128) << 8) + src[1];
    pos = 2;
  }
  if (pos >= size) return DecodeError::kTruncated;
  const uint32_t modes = src[pos++];
  const Field order[3] = {Field::kLiteralLength, Field::kOffset, Field::kMatchLength};
  const uint32_t shift[3] = {6, 4, 2};
  for (int i = 0; i < 3; ++i) {
    uint64_t table_used = 0;
    const DecodeError e = ReadSequenceTable(order[i], (modes >> shift[i]) & 3, src + pos,
                                            size - pos, ws, &table_used);
    if (e != DecodeError::kOk) return e;
    pos += table_used;
  }
  ws->fse_valid = true;
  *count = n;
  *used = pos;
  return DecodeError::kOk;
}

// Lane 0's decoder of the sequence bit stream.
struct SequenceReader {
  BackwardBitReader bits;
  uint32_t ll = 0, of = 0, ml = 0;

  ZARRD_HD bool Init(const uint8_t* src, uint64_t size, const ZstdWorkspace* ws) {
    if (!bits.Init(src, size)) return false;
    ll = bits.Read(ws->ll_log);
    of = bits.Read(ws->of_log);
    ml = bits.Read(ws->ml_log);
    return true;
  }

  ZARRD_HD Sequence Next(ZstdWorkspace* ws, bool last) {
    const FseEntry l = ws->ll[ll], m = ws->ml[ml], o = ws->of[of];
    const uint64_t offset_value = o.base + uint64_t(bits.Read(o.extra_bits));
    Sequence s;
    s.match_length = m.base + bits.Read(m.extra_bits);
    s.literal_length = l.base + bits.Read(l.extra_bits);
    uint64_t* rep = ws->rep;
    if (offset_value > 3) {
      s.offset = offset_value - 3;
      rep[2] = rep[1];
      rep[1] = rep[0];
      rep[0] = s.offset;
    } else {
      const uint64_t index = offset_value + (s.literal_length == 0 ? 1 : 0);
      if (index == 1) {
        s.offset = rep[0];
      } else {
        s.offset = index == 4 ? rep[0] - 1 : rep[index - 1];
        if (s.offset == 0) s.offset = 1;  // as libzstd: a repeat of offset 0 means 1
        if (index != 2) rep[2] = rep[1];
        rep[1] = rep[0];
        rep[0] = s.offset;
      }
    }
    if (!last) {
      ll = l.next_state + bits.Read(l.nb_bits);
      ml = m.next_state + bits.Read(m.nb_bits);
      of = o.next_state + bits.Read(o.nb_bits);
    }
    return s;
  }
};

template <class L>
ZARRD_HD void CopyBytes(uint8_t* dst, const uint8_t* src, uint64_t n, const L& lanes) {
  for (uint64_t i = lanes.lane; i < n; i += lanes.count) dst[i] = src[i];
}

// dst[0..n) = the bytes `offset` before it, repeating with period `offset` when they overlap.
template <class L>
ZARRD_HD void CopyMatch(uint8_t* dst, uint64_t offset, uint64_t n, const L& lanes) {
  const uint8_t* from = dst - offset;
  if (offset >= n || lanes.count == 1) {
    for (uint64_t i = lanes.lane; i < n; i += lanes.count) dst[i] = from[i];
  } else {
    for (uint64_t i = lanes.lane; i < n; i += lanes.count) dst[i] = from[i % offset];
  }
}

// Decodes the sequences section src[0..size) and executes it with `lit`, writing the block at
// dst[*out..]; matches may reach back to dst[frame_start]. Called by all lanes.
template <class L>
ZARRD_HD DecodeError DecodeSequences(const uint8_t* src, uint64_t size, Literals lit, uint8_t* dst,
                                     uint64_t dst_size, uint64_t frame_start, uint64_t* out,
                                     ZstdWorkspace* ws, const L& lanes) {
  DecodeError e = DecodeError::kOk;
  uint64_t count = 0, used = 0;
  if (lanes.Leader()) e = ReadSequencesHeader(src, size, ws, &count, &used);
  e = lanes.Broadcast(e);
  if (e != DecodeError::kOk) return e;
  count = lanes.Broadcast(count);
  used = lanes.Broadcast(used);
  SequenceReader reader;
  if (count > 0) {
    bool ok = true;
    if (lanes.Leader()) ok = reader.Init(src + used, size - used, ws);
    if (!lanes.Broadcast(uint64_t(ok))) return DecodeError::kCorrupt;
  }
  uint64_t op = *out;
  uint64_t lit_pos = 0;
  for (uint64_t done = 0; done < count;) {
    const uint64_t batch = count - done < kSequenceBatch ? count - done : kSequenceBatch;
    if (lanes.Leader()) {
      for (uint64_t i = 0; i < batch; ++i) ws->seq[i] = reader.Next(ws, done + i + 1 == count);
    }
    lanes.Sync();
    for (uint64_t i = 0; i < batch; ++i) {
      const Sequence s = ws->seq[i];
      if (s.literal_length > lit.size - lit_pos) return DecodeError::kCorrupt;
      if (uint64_t(s.literal_length) + s.match_length > dst_size - op) {
        return DecodeError::kOutputOverrun;
      }
      CopyBytes(dst + op, lit.data + lit_pos, s.literal_length, lanes);
      lit_pos += s.literal_length;
      op += s.literal_length;
      if (s.offset > op - frame_start) return DecodeError::kCorrupt;
      // A match that reads this sequence's literals (or itself) waits for them.
      if (s.offset < uint64_t(s.literal_length) + s.match_length) lanes.Sync();
      CopyMatch(dst + op, s.offset, s.match_length, lanes);
      op += s.match_length;
      lanes.Sync();
    }
    done += batch;
  }
  if (count > 0) {
    bool exact = true;
    if (lanes.Leader()) exact = reader.bits.BitsLeft() == 0;
    if (!lanes.Broadcast(uint64_t(exact))) return DecodeError::kCorrupt;
  }
  const uint64_t rest = lit.size - lit_pos;
  if (rest > dst_size - op) return DecodeError::kOutputOverrun;
  CopyBytes(dst + op, lit.data + lit_pos, rest, lanes);
  lanes.Sync();
  *out = op + rest;
  return DecodeError::kOk;
}

}  // namespace zarrd::decode::zstd
