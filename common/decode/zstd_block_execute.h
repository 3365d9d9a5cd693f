// Step 3 of the block-parallel zstd decoder (zstd_blocks.h): the execution of a task's blocks in
// order, after every block's entropy decoding. Per batch of kSequenceBatch sequences the lanes
// load the raw sequences, lane 0 resolves their repeat offsets (which run on across the blocks of
// a frame), checks and places them (PlaceSequence), and the lanes execute the batch at once
// (zstd_execute.h); raw and RLE blocks and the literals after the last sequence are copied by
// all lanes; a frame's content size and checksum are checked after its last block. The first
// error in the order of the input is the task's: a block's entropy error when execution reaches
// that block, and the split's error after the blocks it split.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_block_split.h"
#include "common/decode/zstd_execute.h"
#include "common/decode/zstd_sequences.h"
#include "common/decode/zstd_xxh64.h"

namespace zarrd::decode::zstd {

// Lane 0: resolves the offsets of the raw sequences in b->seq[0..n) (offset holding the offset
// value) with the repeat offsets `rep`, then checks and places each. Sets the batch's literal and
// output lengths.
ZARRD_HD inline DecodeError ResolveSequenceBatch(SequenceBatch* b, uint32_t n, uint32_t* rep,
                                                 uint64_t lit_left, uint64_t out_left,
                                                 uint64_t history, uint32_t* lit_length,
                                                 uint32_t* out_length) {
  uint32_t lit = 0, out = 0;
  b->long_count = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Sequence s = b->seq[i];
    s.offset = ResolveOffset(s.offset, s.literal_length, rep);
    const DecodeError e = PlaceSequence(s, i, lit_left, out_left, history, &lit, &out, b);
    if (e != DecodeError::kOk) return e;
  }
  *lit_length = lit;
  *out_length = out;
  return DecodeError::kOk;
}

// Executes compressed block b at dst[*op..); matches may reach back to dst[frame_start].
template <class L>
ZARRD_HD DecodeError ExecuteCompressed(const uint8_t* src, const SplitBlock& b,
                                       const uint8_t* region, uint8_t* dst, uint64_t dst_size,
                                       uint64_t frame_start, uint64_t* op, uint32_t* rep,
                                       SequenceBatch* batch, const L& lanes) {
  const uint8_t* lit = b.lit_type == 0 ? src + b.src + b.lit_at : region + b.lit_place;
  const RawSequence* raw = reinterpret_cast<const RawSequence*>(region + b.seq_place);
  uint64_t out = *op;
  uint64_t lit_pos = 0;
  for (uint32_t done = 0; done < b.seq_count;) {
    const uint32_t n = b.seq_count - done < kSequenceBatch ? b.seq_count - done : kSequenceBatch;
    for (uint32_t k = lanes.lane; k < n; k += lanes.count) {
      const RawSequence r = raw[done + k];
      batch->seq[k] = Sequence{r.literal_length, r.match_length, r.offset_value, 0, 0};
    }
    lanes.Sync();
    DecodeError e = DecodeError::kOk;
    uint32_t lit_length = 0, out_length = 0;
    if (lanes.Leader()) {
      e = ResolveSequenceBatch(batch, n, rep, b.lit_count - lit_pos, dst_size - out,
                               out - frame_start, &lit_length, &out_length);
    }
    e = lanes.Broadcast(e);
    if (e != DecodeError::kOk) return e;
    const uint64_t lengths = lanes.Broadcast(uint64_t(lit_length) << 32 | out_length);
    lanes.Sync();  // the batch placed
    ExecuteSequenceBatch(batch, n, lit + lit_pos, dst + out, lanes);
    lanes.Sync();  // the batch's output before the next batch reads it; the batch free again
    lit_pos += lengths >> 32;
    out += uint32_t(lengths);
    done += n;
  }
  const uint64_t rest = b.lit_count - lit_pos;
  if (rest > dst_size - out) return DecodeError::kOutputOverrun;
  CopyBytes(dst + out, lit + lit_pos, rest, lanes);
  *op = out + rest;
  return DecodeError::kOk;
}

// Executes the blocks of split `s` of the task whose input is `src` into dst[0..dst_size), which
// they must fill exactly; sets the bytes written. `batch`: shared memory on the GPU. Called by all
// lanes.
template <class L>
ZARRD_HD DecodeError ExecuteTask(const uint8_t* src, const TaskSplit& s, uint8_t* dst,
                                 uint64_t dst_size, uint64_t* written, SequenceBatch* batch,
                                 const L& lanes) {
  uint64_t op = 0, frame_start = 0;
  uint32_t rep[3] = {1, 4, 8};
  DecodeError e = DecodeError::kOk;
  for (uint32_t i = 0; i < s.count && e == DecodeError::kOk; ++i) {
    const SplitBlock& b = s.blocks[i];
    if (b.flags & kFirstInFrame) {
      frame_start = op;
      rep[0] = 1;
      rep[1] = 4;
      rep[2] = 8;
    }
    if (b.error != DecodeError::kOk) {
      e = b.error;
    } else if (b.kind == kCompressedBlock) {
      e = ExecuteCompressed(src, b, s.region, dst, dst_size, frame_start, &op, rep, batch, lanes);
    } else if (b.size > dst_size - op) {
      e = DecodeError::kOutputOverrun;
    } else {
      if (b.kind == kRawBlock) {
        CopyBytes(dst + op, src + b.src, b.size, lanes);
      } else {
        const uint8_t byte = src[b.src];
        for (uint64_t k = lanes.lane; k < b.size; k += lanes.count) dst[op + k] = byte;
      }
      op += b.size;
    }
    lanes.Sync();
    if (e != DecodeError::kOk || !(b.flags & kLastInFrame)) continue;
    if ((b.flags & kHasContentSize) && op - frame_start != b.content_size) {
      e = DecodeError::kCorrupt;
    } else if (b.flags & kHasChecksum) {
      uint64_t match = 1;
      if (lanes.Leader()) {
        match = uint32_t(Xxh64(dst + frame_start, op - frame_start, 0)) == b.checksum;
      }
      if (!lanes.Broadcast(match)) e = DecodeError::kChecksum;
    }
  }
  if (e == DecodeError::kOk) e = s.error;
  if (e == DecodeError::kOk && op != dst_size) e = DecodeError::kOutputShort;
  *written = op;
  return e;
}

}  // namespace zarrd::decode::zstd
