// The sequences section of a compressed block (RFC 8878 3.1.1.3.2): its header and the three FSE
// tables (predefined, RLE, compressed or repeated), and decoding of the sequences on lane 0 in
// batches of kSequenceBatch, each sequence placed (where its literals and output start) and
// checked against the literals, the output and the frame as it is decoded. The lanes then execute
// each batch (zstd_execute.h).
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"
#include "common/decode/zstd_execute.h"
#include "common/decode/zstd_fse.h"
#include "common/decode/zstd_literals.h"
#include "common/decode/zstd_workspace.h"

namespace zarrd::decode::zstd {

enum class Field { kLiteralLength, kOffset, kMatchLength };

constexpr uint32_t kMinMatch = 3;

// Baseline and extra bits of each code of a field (RFC 8878 3.1.1.3.2.1.1); match length
// baselines less kMinMatch.
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
      base[c] = c <= 32 ? c : base[c - 1] + (1u << extra[c - 1]);
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

// Builds the table of one field in `mode` (0 predefined, 1 RLE, 2 compressed; the repeat mode is
// the caller's) from src; sets its log and the bytes used. `norm` and `next`: 64 entries.
ZARRD_HD inline DecodeError ReadSequenceTable(Field f, uint32_t mode, const uint8_t* src,
                                              uint64_t size, int16_t* norm, uint16_t* next,
                                              FseEntry* table, uint32_t* log, uint64_t* used) {
  const uint32_t max_log = f == Field::kOffset ? kOffsetLogMax : kMatchLogMax;
  const uint32_t max_symbol = FieldMaxSymbol(f);
  uint32_t base[53];
  uint8_t extra[53];
  FieldValues(f, base, extra);
  *used = 0;
  switch (mode) {
    case 0:
      *log = PredefinedCounts(f, norm);
      BuildFseTable(norm, max_symbol, *log, base, extra, table, next);
      return DecodeError::kOk;
    case 1:
      if (size < 1) return DecodeError::kTruncated;
      if (src[0] > max_symbol) return DecodeError::kCorrupt;
      table[0] = FseEntry::Make(base[src[0]], extra[src[0]], 0, 0);
      *log = 0;
      *used = 1;
      return DecodeError::kOk;
    case 2: {
      const DecodeError e = ReadFseCounts(src, size, max_symbol, max_log, norm, log, used);
      if (e != DecodeError::kOk) return DecodeError::kCorrupt;
      BuildFseTable(norm, max_symbol, *log, base, extra, table, next);
      return DecodeError::kOk;
    }
    default:
      return DecodeError::kCorrupt;
  }
}

// The sequence count at the start of a sequences section; sets the bytes it took.
ZARRD_HD inline DecodeError ReadSequenceCount(const uint8_t* src, uint64_t size, uint64_t* count,
                                              uint64_t* used) {
  if (size < 1) return DecodeError::kTruncated;
  uint64_t n = src[0];
  uint64_t pos = 1;
  if (n == 255) {
    if (size < 3) return DecodeError::kTruncated;
    n = ReadLE16(src + 1) + 0x7F00;
    pos = 3;
  } else if (n >= 128) {
    if (size < 2) return DecodeError::kTruncated;
    n = ((n - 128) << 8) + src[1];
    pos = 2;
  }
  *count = n;
  *used = pos;
  return DecodeError::kOk;
}

// The fields in the order of their modes and tables in the section header, and where each
// field's mode is in the modes byte.
ZARRD_HD inline Field FieldAt(int i) {
  return i == 0 ? Field::kLiteralLength : i == 1 ? Field::kOffset : Field::kMatchLength;
}
ZARRD_HD inline uint32_t ModeShift(int i) { return 6 - 2 * uint32_t(i); }

// Reads the section header and tables (lane 0). Sets the sequence count and the bytes used.
ZARRD_HD inline DecodeError ReadSequencesHeader(const uint8_t* src, uint64_t size,
                                                ZstdWorkspace* ws, ZstdTables* t, uint64_t* count,
                                                uint64_t* used) {
  uint64_t n = 0, pos = 0;
  const DecodeError e = ReadSequenceCount(src, size, &n, &pos);
  if (e != DecodeError::kOk) return e;
  if (n == 0) {
    *count = 0;
    *used = 1;
    return DecodeError::kOk;
  }
  if (pos >= size) return DecodeError::kTruncated;
  const uint32_t modes = src[pos++];
  for (int i = 0; i < 3; ++i) {
    const Field f = FieldAt(i);
    const uint32_t mode = (modes >> ModeShift(i)) & 3;
    if (mode == 3) {
      if (!t->fse_valid) return DecodeError::kCorrupt;
      continue;
    }
    SequenceTables* fse = &t->fse;
    FseEntry* table = f == Field::kLiteralLength ? fse->ll
                      : f == Field::kMatchLength ? fse->ml
                                                 : fse->of;
    uint32_t* log = f == Field::kLiteralLength ? &fse->ll_log
                    : f == Field::kMatchLength ? &fse->ml_log
                                               : &fse->of_log;
    uint64_t table_used = 0;
    const DecodeError e = ReadSequenceTable(f, mode, src + pos, size - pos, ws->norm, ws->next,
                                            table, log, &table_used);
    if (e != DecodeError::kOk) return e;
    pos += table_used;
  }
  t->fse_valid = true;
  *count = n;
  *used = pos;
  return DecodeError::kOk;
}

// The offset of a sequence from its offset value (RFC 8878 3.1.1.5): a new offset (value > 3) or
// one of the repeat offsets, which it updates. An offset is (value, tag): tag 0 means the offset
// `value`; tag j + 1 means max(r[j] - value, 1) of the repeat offsets r a block started with, so
// that a block's sequences resolve without the blocks before it (Concrete resolves them).
ZARRD_HD inline void SymbolicOffset(uint32_t offset_value, uint32_t literal_length, uint32_t* rep,
                                    uint32_t* tag, uint32_t* value, uint32_t* value_tag) {
  // Selects rather than branches: lane 0 runs this for every sequence on the GPU, and rep and tag
  // stay in registers.
  const bool fresh = offset_value > 3;
  const uint32_t index = offset_value + (literal_length == 0 ? 1 : 0);  // 1-4 unless fresh
  // Index 4 repeats the first offset less one; as libzstd, a repeat of offset 0 means 1.
  const uint32_t less_one = tag[0] == 0 ? (rep[0] > 1 ? rep[0] - 1 : 1) : rep[0] + 1;
  const uint32_t v = fresh        ? offset_value - 3
                     : index == 1 ? rep[0]
                     : index == 2 ? rep[1]
                     : index == 3 ? rep[2]
                                  : less_one;
  const uint32_t t = fresh ? 0 : index == 2 ? tag[1] : index == 3 ? tag[2] : tag[0];
  const bool same = !fresh && index == 1;  // the first repeat offset: nothing moves
  const bool swap = !fresh && index == 2;  // the second: the first two trade places
  const bool third_stays = same || swap;
  rep[2] = third_stays ? rep[2] : rep[1];
  tag[2] = third_stays ? tag[2] : tag[1];
  rep[1] = same ? rep[1] : rep[0];
  tag[1] = same ? tag[1] : tag[0];
  rep[0] = v;
  tag[0] = t;
  *value = v;
  *value_tag = t;
}

// The offset (value, tag) of a block that started with the repeat offsets `start`.
ZARRD_HD inline uint32_t Concrete(uint32_t value, uint32_t tag, const uint32_t* start) {
  if (tag == 0) return value;
  const uint32_t r = tag == 1 ? start[0] : tag == 2 ? start[1] : start[2];  // kept in registers
  return r > value + 1 ? r - value : 1;
}

// SymbolicOffset with every repeat offset known.
ZARRD_HD inline uint32_t ResolveOffset(uint32_t offset_value, uint32_t literal_length,
                                       uint32_t* rep) {
  uint32_t tag[3] = {0, 0, 0};
  uint32_t value = 0, value_tag = 0;
  SymbolicOffset(offset_value, literal_length, rep, tag, &value, &value_tag);
  return value;
}

// Lane 0's decoder of the sequence bit stream; the repeat offsets live in its registers while it
// decodes a block (Init loads them, SaveRepeats stores them for the next block).
struct SequenceReader {
  BackwardBitReader bits;
  uint32_t ll = 0, of = 0, ml = 0;
  uint32_t rep[3] = {};

  ZARRD_HD bool Init(const uint8_t* src, uint64_t size, const SequenceTables* t) {
    if (!bits.Init(src, size)) return false;
    ll = bits.Read(t->ll_log);
    of = bits.Read(t->of_log);
    ml = bits.Read(t->ml_log);
    return true;
  }
  ZARRD_HD void LoadRepeats(const ZstdTables* t) {
    for (int i = 0; i < 3; ++i) rep[i] = t->rep[i];
  }
  ZARRD_HD void SaveRepeats(ZstdTables* t) const {
    for (int i = 0; i < 3; ++i) t->rep[i] = rep[i];
  }

  // The next sequence's lengths and offset value (before repeat offsets are resolved).
  ZARRD_HD void NextValues(const SequenceTables* t, bool last, uint32_t* literal_length,
                           uint32_t* match_length, uint32_t* offset_value) {
    const FseEntry l = t->ll[ll], m = t->ml[ml], o = t->of[of];
    bits.Ensure(31);  // offset extra bits: at most 31
    *offset_value = o.base() + bits.ReadLoaded(o.extra_bits());
    bits.Ensure(32);  // length extra bits: at most 16 each
    *match_length = kMinMatch + m.base() + bits.ReadLoaded(m.extra_bits());
    *literal_length = l.base() + bits.ReadLoaded(l.extra_bits());
    if (!last) {
      bits.Ensure(kLiteralsLogMax + kMatchLogMax + kOffsetLogMax);  // state bits: at most the logs
      ll = l.next_state() + bits.ReadLoaded(l.nb_bits());
      ml = m.next_state() + bits.ReadLoaded(m.nb_bits());
      of = o.next_state() + bits.ReadLoaded(o.nb_bits());
    }
  }

  // Sets the lengths and offset of s.
  ZARRD_HD void Next(const SequenceTables* t, bool last, Sequence* s) {
    uint32_t offset_value = 0;
    NextValues(t, last, &s->literal_length, &s->match_length, &offset_value);
    s->offset = ResolveOffset(offset_value, s->literal_length, rep);
  }
};

// Checks sequence s, the i-th of batch b, before placing it there: its literals within the
// lit_left literals left, its output within the out_left bytes of dst left, its match within the
// `history` bytes of the frame before the batch and the batch's output before it (`out`), whose
// literal and output lengths (`lit`, `out`) it then advances.
ZARRD_HD inline DecodeError PlaceSequence(Sequence s, uint32_t i, uint64_t lit_left,
                                          uint64_t out_left, uint64_t history, uint32_t* lit,
                                          uint32_t* out, SequenceBatch* b) {
  if (s.literal_length > lit_left - *lit) return DecodeError::kCorrupt;
  const uint32_t length = s.literal_length + s.match_length;
  if (length > out_left - *out) return DecodeError::kOutputOverrun;
  if (s.offset > history + *out + s.literal_length) return DecodeError::kCorrupt;
  s.lit = *lit;
  s.out = *out;
  b->seq[i] = s;
  if (length > kShortSequence) b->long_seq[b->long_count++] = uint8_t(i);
  *lit += s.literal_length;
  *out += length;
  return DecodeError::kOk;
}

// Lane 0: decodes the next n sequences into t->batch, each checked and placed (PlaceSequence).
// Sets the batch's literal and output lengths.
ZARRD_HD inline DecodeError DecodeSequenceBatch(SequenceReader* reader, ZstdTables* t, uint32_t n,
                                                bool last_batch, uint64_t lit_left,
                                                uint64_t out_left, uint64_t history,
                                                uint32_t* lit_length, uint32_t* out_length) {
  uint32_t lit = 0, out = 0;
  t->batch.long_count = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Sequence s;
    reader->Next(&t->fse, last_batch && i + 1 == n, &s);
    const DecodeError e = PlaceSequence(s, i, lit_left, out_left, history, &lit, &out, &t->batch);
    if (e != DecodeError::kOk) return e;
  }
  *lit_length = lit;
  *out_length = out;
  return DecodeError::kOk;
}

// Decodes the sequences section src[0..size) and executes it with `lit`, writing the block at
// dst[*out..]; matches may reach back to dst[frame_start]. Called by all lanes.
template <class L>
ZARRD_HD DecodeError DecodeSequences(const uint8_t* src, uint64_t size, Literals lit, uint8_t* dst,
                                     uint64_t dst_size, uint64_t frame_start, uint64_t* out,
                                     ZstdWorkspace* ws, ZstdTables* t, const L& lanes) {
  DecodeError e = DecodeError::kOk;
  uint64_t count = 0, used = 0;
  if (lanes.Leader()) e = ReadSequencesHeader(src, size, ws, t, &count, &used);
  e = lanes.Broadcast(e);
  if (e != DecodeError::kOk) return e;
  count = lanes.Broadcast(count);
  SequenceReader reader;
  if (count > 0) {
    bool ok = true;
    if (lanes.Leader()) {
      ok = reader.Init(src + used, size - used, &t->fse);
      reader.LoadRepeats(t);
    }
    if (!lanes.Broadcast(uint64_t(ok))) return DecodeError::kCorrupt;
  }
  uint64_t op = *out;
  uint64_t lit_pos = 0;
  for (uint64_t done = 0; done < count;) {
    const uint32_t n = uint32_t(count - done < kSequenceBatch ? count - done : kSequenceBatch);
    uint32_t lit_length = 0, out_length = 0;
    if (lanes.Leader()) {
      e = DecodeSequenceBatch(&reader, t, n, done + n == count, lit.size - lit_pos, dst_size - op,
                              op - frame_start, &lit_length, &out_length);
    }
    e = lanes.Broadcast(e);
    if (e != DecodeError::kOk) return e;
    const uint64_t lengths = lanes.Broadcast(uint64_t(lit_length) << 32 | out_length);
    lanes.Sync();  // the batch in t->batch
    ExecuteSequenceBatch(&t->batch, n, lit.data + lit_pos, dst + op, lanes);
    lanes.Sync();  // the batch's output before the next batch reads it; t->batch free again
    lit_pos += lengths >> 32;
    op += uint32_t(lengths);
    done += n;
  }
  if (count > 0) {
    bool exact = true;
    if (lanes.Leader()) {
      exact = reader.bits.BitsLeft() == 0;
      reader.SaveRepeats(t);
    }
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
