// Step 3 of the block-parallel zstd decoder (zstd_blocks.h): the execution of a task's blocks in
// order, after every block's entropy decoding. The repeat offsets each block starts with are
// known here (those after the block before, in all lanes), so each lane resolves its sequences'
// offsets itself; per batch of kSequenceBatch sequences the lanes place and check theirs at once
// (prefix sums of the lengths across the lanes) and execute the batch (zstd_execute.h); raw and RLE
// blocks and the literals after the last sequence are copied by all lanes; a frame's content size
// and checksum are checked after its last block. The first error in the order of the input is the
// task's: a block's entropy error when execution reaches that block, and the split's error after
// the blocks it split.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_block_split.h"
#include "common/decode/zstd_execute.h"
#include "common/decode/zstd_sequences.h"
#include "common/decode/zstd_xxh64.h"

namespace zarrd::decode::zstd {

// Places raw[0..n) (n <= kSequenceBatch) in `batch`, their offsets resolved with the repeat
// offsets `start` the block began with, each checked as PlaceSequence checks it; the first
// failing sequence's error is the batch's. The lanes take lanes.count sequences at a time, their
// positions by prefix sums across the lanes. Sets the batch's literal and output lengths.
// `lane_first`: raw[lanes.lane] when this lane's index is below n, loaded by the caller ahead.
template <class L>
ZARRD_HD DecodeError PlaceBatch(const RawSequence* raw, RawSequence lane_first, uint32_t n,
                                const uint32_t* start, uint64_t lit_left, uint64_t out_left,
                                uint64_t history, SequenceBatch* batch, uint32_t* lit_length,
                                uint32_t* out_length, const L& lanes) {
  uint32_t lit = 0, out = 0, long_count = 0;
  for (uint32_t first = 0; first < n; first += lanes.count) {
    const uint32_t i = first + lanes.lane;
    Sequence s{0, 0, 0, 0, 0};
    if (i < n) {
      const RawSequence r = first == 0 ? lane_first : raw[i];
      s.literal_length = r.tag_literal_length & ((1u << kTagShift) - 1);
      s.match_length = r.match_length;
      s.offset = Concrete(r.offset, r.tag_literal_length >> kTagShift, start);
    }
    const uint32_t length = s.literal_length + s.match_length;
    const uint32_t lit_end = lit + lanes.ScanAdd(s.literal_length);
    const uint32_t out_end = out + lanes.ScanAdd(length);
    s.lit = lit_end - s.literal_length;
    s.out = out_end - length;
    DecodeError e = DecodeError::kOk;
    if (i < n) {
      if (lit_end > lit_left) {
        e = DecodeError::kCorrupt;
      } else if (out_end > out_left) {
        e = DecodeError::kOutputOverrun;
      } else if (s.offset > history + s.out + s.literal_length) {
        e = DecodeError::kCorrupt;
      }
    }
    const uint32_t failed = lanes.Ballot(e != DecodeError::kOk);
    if (failed != 0) return DecodeError(lanes.Shuffle(uint64_t(e), LowBit32(failed)));
    if (i < n) batch->seq[i] = s;
    const bool long_one = i < n && length > kShortSequence;
    const uint32_t longs = lanes.Ballot(long_one);
    if (long_one) {
      batch->long_seq[long_count + PopCount32(longs & ((1u << lanes.lane) - 1))] = uint8_t(i);
    }
    long_count += PopCount32(longs);
    const uint32_t last = lanes.count - 1;
    lit = uint32_t(lanes.Shuffle(lit_end, last));
    out = uint32_t(lanes.Shuffle(out_end, last));
  }
  if (lanes.Leader()) batch->long_count = long_count;
  *lit_length = lit;
  *out_length = out;
  return DecodeError::kOk;
}

// Executes compressed block b at dst[*op..); matches may reach back to dst[frame_start]. `rep`:
// the repeat offsets before the block, then after it.
template <class L>
ZARRD_HD DecodeError ExecuteCompressed(const uint8_t* src, const SplitBlock& b,
                                       const uint8_t* region, uint8_t* dst, uint64_t dst_size,
                                       uint64_t frame_start, uint64_t* op, uint32_t* rep,
                                       SequenceBatch* batch, const L& lanes) {
  const uint8_t* lit = b.lit_type == 0 ? src + b.src + b.lit_at : region + b.lit_place;
  const RawSequence* raw = reinterpret_cast<const RawSequence*>(region + b.seq_place);
  uint64_t out = *op;
  uint64_t lit_pos = 0;
  // Each lane's sequence of the next batch is loaded before the batch before it executes, so
  // that the load's latency passes under the copies.
  RawSequence next{0, 0, 0};
  if (lanes.lane < b.seq_count) next = raw[lanes.lane];
  for (uint32_t done = 0; done < b.seq_count;) {
    const uint32_t n = b.seq_count - done < kSequenceBatch ? b.seq_count - done : kSequenceBatch;
    uint32_t lit_length = 0, out_length = 0;
    const DecodeError e =
        PlaceBatch(raw + done, next, n, rep, b.lit_count - lit_pos, dst_size - out,
                   out - frame_start, batch, &lit_length, &out_length, lanes);
    if (e != DecodeError::kOk) return e;
    if (done + n + lanes.lane < b.seq_count) next = raw[done + n + lanes.lane];
    lanes.Sync();  // the batch placed
    ExecuteSequenceBatch(batch, n, lit + lit_pos, dst + out, lanes);
    lanes.Sync();  // the batch's output before the next batch reads it; the batch free again
    lit_pos += lit_length;
    out += out_length;
    done += n;
  }
  const uint64_t rest = b.lit_count - lit_pos;
  if (rest > dst_size - out) return DecodeError::kOutputOverrun;
  CopyBytes(dst + out, lit + lit_pos, rest, lanes);
  *op = out + rest;
  uint32_t after[3];
  ZARRD_UNROLL
  for (int i = 0; i < 3; ++i) after[i] = Concrete(b.rep[i], b.rep_tag[i], rep);
  ZARRD_UNROLL
  for (int i = 0; i < 3; ++i) rep[i] = after[i];
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
