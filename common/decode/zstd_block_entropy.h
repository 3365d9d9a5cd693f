// Step 2 of the block-parallel zstd decoder (zstd_blocks.h): the entropy decoding of one
// compressed block, independent of every other block. Its tables are built from the
// descriptions the split recorded (its own, or an earlier block's for treeless literals and the
// repeat mode); its literals are decoded into its place in the task's region (raw literals stay
// in the input) and its sequences into an array of RawSequence there, with their offsets
// resolved as far as the block knows them: a repeat offset from before the block is kept as
// "the j-th repeat offset the block started with, less k" (SymbolicOffset). The Huffman table and
// the FSE tables (entries of 32 bits) are used one after the other, so they share BlockTables
// (shared memory on the GPU, about 8.3 KiB: the Huffman table of up to 2^12 entries and its
// weights; the weights' FSE scratch lives in the Huffman table's memory until the table is built).
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_block_split.h"
#include "common/decode/zstd_huffman.h"
#include "common/decode/zstd_literals.h"
#include "common/decode/zstd_sequences.h"

namespace zarrd::decode::zstd {

// The Huffman table, whose memory also holds the weights' FSE scratch while the tree
// description is read.
struct LiteralTables {
  HufEntry huf[1 << kHufMaxLog];
  HufScratch scratch;
};
static_assert(sizeof(WeightScratch) <= sizeof(LiteralTables::huf));

struct SequenceBuild {
  SequenceTables fse;
  int16_t norm[64];
  uint16_t next[64];
};

constexpr uint64_t kBlockTablesSize = sizeof(LiteralTables) > sizeof(SequenceBuild)
                                          ? sizeof(LiteralTables)
                                          : sizeof(SequenceBuild);

// Raw storage for the one of LiteralTables and SequenceBuild in use.
struct alignas(8) BlockTables {
  unsigned char bytes[kBlockTablesSize];
};

// Lane 0: builds the block's three FSE tables and decodes its sequences into `out`; sets its
// output size.
ZARRD_HD inline DecodeError DecodeRawSequences(const uint8_t* src, SplitBlock* b, RawSequence* out,
                                               SequenceBuild* t) {
  const TableSource* sources[3] = {&b->ll, &b->of, &b->ml};
  FseEntry* tables[3] = {t->fse.ll, t->fse.of, t->fse.ml};
  uint32_t* logs[3] = {&t->fse.ll_log, &t->fse.of_log, &t->fse.ml_log};
  for (int i = 0; i < 3; ++i) {
    const TableSource& s = *sources[i];
    uint64_t used = 0;
    const DecodeError e = ReadSequenceTable(FieldAt(i), s.mode, src + s.at, s.size, t->norm,
                                            t->next, tables[i], logs[i], &used);
    if (e != DecodeError::kOk) return DecodeError::kCorrupt;
  }
  SequenceReader reader;
  if (!reader.Init(src + b->src + b->seq_at, b->size - b->seq_at, &t->fse)) {
    return DecodeError::kCorrupt;
  }
  uint64_t literals = 0, output = 0;
  uint32_t rep[3] = {0, 0, 0}, tag[3] = {1, 2, 3};  // the repeat offsets the block starts with
  const uint32_t n = b->seq_count, lit_count = b->lit_count;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t literal_length, match_length, offset_value, offset, offset_tag;
    reader.NextValues(&t->fse, i + 1 == n, &literal_length, &match_length, &offset_value);
    SymbolicOffset(offset_value, literal_length, rep, tag, &offset, &offset_tag);
    literals += literal_length;
    if (literals > lit_count) return DecodeError::kCorrupt;
    output += uint64_t(literal_length) + match_length;
    out[i] = RawSequence{literal_length | offset_tag << kTagShift, match_length, offset};
  }
  if (reader.bits.BitsLeft() != 0) return DecodeError::kCorrupt;
  for (int i = 0; i < 3; ++i) {
    b->rep[i] = rep[i];
    b->rep_tag[i] = tag[i];
  }
  b->out_size = output + (lit_count - literals);
  return DecodeError::kOk;
}

template <class L>
ZARRD_HD DecodeError DecodeBlockEntropyOf(const uint8_t* src, SplitBlock* b, uint8_t* region,
                                          BlockTables* tables, const L& lanes) {
  const uint8_t* block = src + b->src;
  uint8_t* literals = region + b->lit_place;
  if (b->lit_type == 1) {
    const uint8_t byte = block[b->lit_at];
    for (uint32_t i = lanes.lane; i < b->lit_count; i += lanes.count) literals[i] = byte;
  } else if (b->lit_type >= 2) {
    auto* t = reinterpret_cast<LiteralTables*>(tables->bytes);
    DecodeError e = DecodeError::kOk;
    uint32_t log = 0;
    if (lanes.Leader()) {
      uint64_t used = 0;
      e = ReadHuffmanTable(src + b->huf_at, b->huf_size, &t->scratch,
                           reinterpret_cast<WeightScratch*>(t->huf), t->huf, &log, &used);
    }
    lanes.Sync();
    e = lanes.Broadcast(e);
    if (e != DecodeError::kOk) return DecodeError::kCorrupt;
    log = uint32_t(lanes.Broadcast(uint64_t(log)));
    e = DecodeHuffmanLiterals(block + b->lit_at, b->lit_size, b->lit_count, b->four_streams != 0,
                              t->huf, log, literals, lanes);
    if (e != DecodeError::kOk) return e;
  }
  lanes.Sync();  // the Huffman table is read no more
  if (b->seq_count == 0) {
    if (lanes.Leader()) {
      b->out_size = b->lit_count;
      for (uint32_t i = 0; i < 3; ++i) {
        b->rep[i] = 0;
        b->rep_tag[i] = i + 1;
      }
    }
    return DecodeError::kOk;
  }
  DecodeError e = DecodeError::kOk;
  if (lanes.Leader()) {
    e = DecodeRawSequences(src, b, reinterpret_cast<RawSequence*>(region + b->seq_place),
                           reinterpret_cast<SequenceBuild*>(tables->bytes));
  }
  lanes.Sync();
  return lanes.Broadcast(e);
}

// Decodes block b of the task whose input is `src` and whose region is `region`, setting its
// error (kOk when it decoded) and output size. Raw and RLE blocks need nothing. Called by all
// lanes.
template <class L>
ZARRD_HD void DecodeBlockEntropy(const uint8_t* src, SplitBlock* b, uint8_t* region,
                                 BlockTables* tables, const L& lanes) {
  if (b->kind != kCompressedBlock) return;
  const DecodeError e = DecodeBlockEntropyOf(src, b, region, tables, lanes);
  if (lanes.Leader()) b->error = e;
  lanes.Sync();
}

}  // namespace zarrd::decode::zstd
