// Step 3 of the block-parallel zstd decoder (zstd_blocks.h): the execution of a task's blocks,
// after every block's entropy decoding. PlanExecution gives each block, from the output sizes and
// symbolic repeat offsets the entropy step left, where its output starts and the repeat offsets it
// starts with, so that the blocks can execute at once (a warp each on the GPU) or in order (the
// host, ExecuteTask). Each lane resolves its sequences' offsets itself; per batch of
// kSequenceBatch sequences the lanes place and check theirs at once (prefix sums of the lengths
// across the lanes) and execute the batch (zstd_execute.h); raw and RLE blocks and the literals
// after the last sequence are copied by all lanes. Blocks executing at once publish how much of
// their output is final, and a batch whose matches reach into an earlier block waits for those
// bytes (BlockProgress). FinishTask then checks each frame's content size and checksum and gives
// the task the first error in the order of the input: a block's entropy or execution error, and
// the split's error after the blocks it split.
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

// Blocks executed one after another (ExecuteTask): every earlier block is complete.
struct InOrder {
  static constexpr bool kConcurrent = false;
  ZARRD_HD bool Wait(uint64_t, uint64_t) const { return true; }
  ZARRD_HD void Acquire() const {}
  template <class L>
  ZARRD_HD void Publish(uint32_t, const L&) const {}
};

// Blocks executing at once, block k of `blocks` among them. `Atomics` reads and writes the blocks'
// progress words: Load(word) with acquire order, Store(word, value, lanes) with release order
// after all lanes' writes, Fence() as an acquire fence for the lanes that did not load, and
// Pause() between polls.
template <class Atomics>
struct BlockProgress {
  static constexpr bool kConcurrent = true;
  SplitBlock* blocks;
  uint32_t k;
  Atomics atomics;

  // Waits until the output bytes [lo, hi) of earlier blocks are final; false when a block that
  // writes them failed. Called by a lane.
  ZARRD_HD bool Wait(uint64_t lo, uint64_t hi) const {
    for (uint32_t j = k; j-- > 0;) {
      const SplitBlock& b = blocks[j];
      if (b.out_start >= hi) continue;
      const uint64_t end = b.out_start + b.out_size;
      if (end <= lo) break;
      const uint64_t need = (hi < end ? hi : end) - b.out_start;
      for (;;) {
        const uint32_t p = atomics.Load(&blocks[j].progress);
        if (p & kBlockFailed) return false;
        if (p >= need) break;
        atomics.Pause();
      }
    }
    return true;
  }
  ZARRD_HD void Acquire() const { atomics.Fence(); }
  // The first `bytes` bytes of block k are final (or kBlockFailed). Called by all lanes.
  template <class L>
  ZARRD_HD void Publish(uint32_t bytes, const L& lanes) const {
    atomics.Store(&blocks[k].progress, bytes, lanes);
  }
};

// Batches a block executing at once executes between publishing its progress: each publication
// makes the warp wait for its writes to reach the whole GPU.
constexpr uint32_t kPublishBatches = 8;

// Executes compressed block b at dst[b.out_start..); matches may reach back to
// dst[b.frame_start].
template <class L, class P>
ZARRD_HD DecodeError ExecuteCompressed(const uint8_t* src, const SplitBlock& b,
                                       const uint8_t* region, uint8_t* dst, uint64_t dst_size,
                                       SequenceBatch* batch, const L& lanes, const P& progress) {
  const uint8_t* lit = b.lit_type == 0 ? src + b.src + b.lit_at : region + b.lit_place;
  const RawSequence* raw = reinterpret_cast<const RawSequence*>(region + b.seq_place);
  const uint64_t start = b.out_start;
  uint64_t out = start;
  uint64_t lit_pos = 0;
  uint32_t batches = 0;
  // Each lane's sequence of the next batch is loaded before the batch before it executes, so
  // that the load's latency passes under the copies.
  RawSequence next{0, 0, 0};
  if (lanes.lane < b.seq_count) next = raw[lanes.lane];
  for (uint32_t done = 0; done < b.seq_count;) {
    const uint32_t n = b.seq_count - done < kSequenceBatch ? b.seq_count - done : kSequenceBatch;
    uint32_t lit_length = 0, out_length = 0;
    const DecodeError e =
        PlaceBatch(raw + done, next, n, b.rep_start, b.lit_count - lit_pos, dst_size - out,
                   out - b.frame_start, batch, &lit_length, &out_length, lanes);
    if (e != DecodeError::kOk) return e;
    if (done + n + lanes.lane < b.seq_count) next = raw[done + n + lanes.lane];
    lanes.Sync();  // the batch placed
    if constexpr (P::kConcurrent) {
      bool reaches_back = false, ok = true;
      for (uint32_t i = lanes.lane; i < n; i += lanes.count) {
        const Sequence& q = batch->seq[i];
        const uint64_t from = out + q.out + q.literal_length - q.offset;
        if (from < start) {
          reaches_back = true;
          const uint64_t to = from + q.match_length;
          ok = progress.Wait(from, to < start ? to : start) && ok;
        }
      }
      if (lanes.Ballot(reaches_back) != 0) {
        if (lanes.Ballot(!ok) != 0) return DecodeError::kCorrupt;  // an earlier block's error
        progress.Acquire();
      }
    }
    ExecuteSequenceBatch(batch, n, lit + lit_pos, dst + out, lanes);
    lanes.Sync();  // the batch's output before the next batch reads it; the batch free again
    lit_pos += lit_length;
    out += out_length;
    done += n;
    if constexpr (P::kConcurrent) {
      if (++batches % kPublishBatches == 0) progress.Publish(uint32_t(out - start), lanes);
    }
  }
  const uint64_t rest = b.lit_count - lit_pos;
  if (rest > dst_size - out) return DecodeError::kOutputOverrun;
  CopyBytes(dst + out, lit + lit_pos, rest, lanes);
  return DecodeError::kOk;
}

// Gives the blocks of split `s` (entropy-decoded) their output's start, their frame's start and
// the repeat offsets they start with, and their progress 0; returns how many of them execute: up
// to the first whose entropy decoding failed, or through the first whose output would pass
// dst_size (its execution then fails as in order). Called by one lane.
ZARRD_HD inline uint32_t PlanExecution(const TaskSplit& s, uint64_t dst_size) {
  uint64_t op = 0, frame_start = 0;
  uint32_t rep[3] = {1, 4, 8};
  for (uint32_t i = 0; i < s.count; ++i) {
    SplitBlock& b = s.blocks[i];
    if (b.flags & kFirstInFrame) {
      frame_start = op;
      rep[0] = 1;
      rep[1] = 4;
      rep[2] = 8;
    }
    if (b.error != DecodeError::kOk) return i;
    b.out_start = op;
    b.frame_start = frame_start;
    b.progress = 0;
    ZARRD_UNROLL
    for (int r = 0; r < 3; ++r) b.rep_start[r] = rep[r];
    if (b.kind == kCompressedBlock) {
      uint32_t after[3];
      ZARRD_UNROLL
      for (int r = 0; r < 3; ++r) after[r] = Concrete(b.rep[r], b.rep_tag[r], rep);
      ZARRD_UNROLL
      for (int r = 0; r < 3; ++r) rep[r] = after[r];
    }
    if (b.out_size > dst_size - op) return i + 1;
    op += b.out_size;
  }
  return s.count;
}

// Executes block k of split `s` (planned) into dst[0..dst_size); its error, which the caller
// records in the block. Called by all lanes.
template <class L, class P>
ZARRD_HD DecodeError ExecuteBlock(const uint8_t* src, const TaskSplit& s, uint32_t k, uint8_t* dst,
                                  uint64_t dst_size, SequenceBatch* batch, const L& lanes,
                                  const P& progress) {
  const SplitBlock& b = s.blocks[k];
  if (b.kind == kCompressedBlock) {
    return ExecuteCompressed(src, b, s.region, dst, dst_size, batch, lanes, progress);
  }
  const uint64_t op = b.out_start;
  if (b.size > dst_size - op) return DecodeError::kOutputOverrun;
  if (b.kind == kRawBlock) {
    CopyBytes(dst + op, src + b.src, b.size, lanes);
  } else {
    const uint8_t byte = src[b.src];
    for (uint64_t i = lanes.lane; i < b.size; i += lanes.count) dst[op + i] = byte;
  }
  return DecodeError::kOk;
}

// After the blocks of split `s` executed (each failed one's error recorded): checks the frames'
// content sizes and checksums in order and sets the bytes written up to the first error, which
// it returns. Called by all lanes.
template <class L>
ZARRD_HD DecodeError FinishTask(const TaskSplit& s, const uint8_t* dst, uint64_t dst_size,
                                uint64_t* written, const L& lanes) {
  uint64_t op = 0;
  DecodeError e = DecodeError::kOk;
  for (uint32_t i = 0; i < s.count && e == DecodeError::kOk; ++i) {
    const SplitBlock& b = s.blocks[i];
    if (b.error != DecodeError::kOk) {
      e = b.error;
      break;
    }
    op = b.out_start + b.out_size;
    if (!(b.flags & kLastInFrame)) continue;
    if ((b.flags & kHasContentSize) && op - b.frame_start != b.content_size) {
      e = DecodeError::kCorrupt;
    } else if (b.flags & kHasChecksum) {
      uint64_t match = 1;
      if (lanes.Leader()) {
        match = uint32_t(Xxh64(dst + b.frame_start, op - b.frame_start, 0)) == b.checksum;
      }
      if (!lanes.Broadcast(match)) e = DecodeError::kChecksum;
    }
  }
  if (e == DecodeError::kOk) e = s.error;
  if (e == DecodeError::kOk && op != dst_size) e = DecodeError::kOutputShort;
  *written = op;
  return e;
}

// Executes the blocks of split `s` of the task whose input is `src` in order into
// dst[0..dst_size), which they must fill exactly; sets the bytes written. `batch`: shared memory
// on the GPU. Called by all lanes.
template <class L>
ZARRD_HD DecodeError ExecuteTask(const uint8_t* src, const TaskSplit& s, uint8_t* dst,
                                 uint64_t dst_size, uint64_t* written, SequenceBatch* batch,
                                 const L& lanes) {
  uint32_t runnable = 0;
  if (lanes.Leader()) runnable = PlanExecution(s, dst_size);
  lanes.Sync();
  runnable = uint32_t(lanes.Broadcast(uint64_t(runnable)));
  for (uint32_t k = 0; k < runnable; ++k) {
    const DecodeError e = ExecuteBlock(src, s, k, dst, dst_size, batch, lanes, InOrder{});
    lanes.Sync();
    if (e != DecodeError::kOk) {
      if (lanes.Leader()) s.blocks[k].error = e;
      lanes.Sync();
      break;
    }
  }
  return FinishTask(s, dst, dst_size, written, lanes);
}

}  // namespace zarrd::decode::zstd
