// Execution of a batch of decoded zstd sequences (zstd_sequences.h) by the lanes at once. Every
// byte a batch writes is a function of the literals and of the output before the batch: a match
// byte whose source lies inside the batch is traced back (BatchSource) through the sequences
// before it (a match that overlaps itself maps to its first period) until it reaches a literal
// or the output before the batch. So the lanes need no ordering among themselves within a
// batch: each lane copies the short sequences with its index (kCopyStep bytes at a time, their
// loads in flight together; a sequence whose match lies before the batch loads its first
// literals and match bytes together), then all lanes copy the long ones together, byte by byte.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_workspace.h"

namespace zarrd::decode::zstd {

// Sequences up to this many bytes (literals and match) are copied by one lane.
constexpr uint32_t kShortSequence = 32;

template <class L>
ZARRD_HD void CopyBytes(uint8_t* dst, const uint8_t* src, uint64_t n, const L& lanes) {
  for (uint64_t i = lanes.lane; i < n; i += lanes.count) dst[i] = src[i];
}

// Bytes a lane loads (each into a register of its own) before it stores them.
constexpr uint32_t kCopyStep = 8;

// dst[0..n) = src[0..n) on one lane; the ranges do not overlap.
ZARRD_HD inline void CopyShort(uint8_t* dst, const uint8_t* src, uint32_t n) {
  for (uint32_t i = 0; i < n; i += kCopyStep) {
    uint8_t v[kCopyStep];
    ZARRD_UNROLL
    for (uint32_t k = 0; k < kCopyStep; ++k) {
      if (i + k < n) v[k] = src[i + k];
    }
    ZARRD_UNROLL
    for (uint32_t k = 0; k < kCopyStep; ++k) {
      if (i + k < n) dst[i + k] = v[k];
    }
  }
}

// A sequence whose match source lies before its batch: literals lit[0..ll) then the match's
// bytes match[0..ml) at dst. The first kCopyStep bytes of both are loaded before any is stored,
// a literal's and a match byte's load side by side: loading one array after the other (a loop
// for each, shared with CopyShort) measured 43.0 against 41.9 ms for R1's chunks (H100).
ZARRD_HD inline void CopySequence(uint8_t* dst, const uint8_t* lit, uint32_t ll,
                                  const uint8_t* match, uint32_t ml) {
  uint8_t a[kCopyStep], b[kCopyStep];
  ZARRD_UNROLL
  for (uint32_t k = 0; k < kCopyStep; ++k) {
    if (k < ll) a[k] = lit[k];
    if (k < ml) b[k] = match[k];
  }
  ZARRD_UNROLL
  for (uint32_t k = 0; k < kCopyStep; ++k) {
    if (k < ll) dst[k] = a[k];
  }
  ZARRD_UNROLL
  for (uint32_t k = 0; k < kCopyStep; ++k) {
    if (k < ml) dst[ll + k] = b[k];
  }
  if (ll > kCopyStep) CopyShort(dst + kCopyStep, lit + kCopyStep, ll - kCopyStep);
  if (ml > kCopyStep) CopyShort(dst + ll + kCopyStep, match + kCopyStep, ml - kCopyStep);
}

// The index of the sequence of the batch b->seq[0..n) whose output holds out[p]:
// b->seq[i].out <= p < b->seq[i + 1].out.
ZARRD_HD inline uint32_t SequenceHolding(const SequenceBatch* b, uint32_t n, uint32_t p) {
  uint32_t lo = 0, hi = n;
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (b->seq[mid].out <= p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Where the byte that the batch b->seq[0..n) writes at out[p] comes from: a literal in `lit` or
// a byte of the output before `out`; and in *run (at most its value on entry) how many bytes from
// p on come from the bytes after that source: up to the end of the literal run, of the match or
// of the match's period, or of the output before the batch, met on the way. The sequences were
// checked as they were decoded, so every match reaches back at most to the frame's start; each
// step moves to an earlier sequence or returns.
ZARRD_HD inline const uint8_t* BatchSourceRun(const SequenceBatch* b, uint32_t n,
                                              const uint8_t* lit, const uint8_t* out, uint32_t p,
                                              uint32_t* run) {
  uint32_t r = *run;
  for (;;) {
    const Sequence& s = b->seq[SequenceHolding(b, n, p)];
    const uint32_t in_sequence = p - s.out;
    if (in_sequence < s.literal_length) {
      *run = r < s.literal_length - in_sequence ? r : s.literal_length - in_sequence;
      return lit + s.lit + in_sequence;
    }
    uint32_t in_match = in_sequence - s.literal_length;
    if (s.match_length - in_match < r) r = s.match_length - in_match;
    if (in_match >= s.offset) in_match %= s.offset;        // the same byte one or more periods back
    if (s.offset - in_match < r) r = s.offset - in_match;  // the period's end
    const uint32_t at = s.out + s.literal_length + in_match;
    if (s.offset > at) {
      *run = r < s.offset - at ? r : s.offset - at;
      return out - (s.offset - at);
    }
    p = at - s.offset;
  }
}

// The source of out[p] alone.
ZARRD_HD inline const uint8_t* BatchSource(const SequenceBatch* b, uint32_t n, const uint8_t* lit,
                                           const uint8_t* out, uint32_t p) {
  uint32_t one = 1;
  return BatchSourceRun(b, n, lit, out, p, &one);
}

// out[at..at+n) on one lane, for a match whose source reaches into its batch b->seq[0..count):
// run by run of bytes whose sources are contiguous (literals or output before the batch, which
// the batch does not write), each copied as CopyShort copies.
ZARRD_HD inline void CopyTraced(const SequenceBatch* b, uint32_t count, const uint8_t* lit,
                                uint8_t* out, uint32_t at, uint32_t n) {
  for (uint32_t i = 0; i < n;) {
    uint32_t run = n - i;
    const uint8_t* from = BatchSourceRun(b, count, lit, out, at + i, &run);
    CopyShort(out + at + i, from, run);
    i += run;
  }
}

// Writes the batch b->seq[0..n) (placed by DecodeSequenceBatch) at out, its literals taken from
// lit. Called by all lanes; the caller syncs them before another batch reads the output.
template <class L>
ZARRD_HD void ExecuteSequenceBatch(const SequenceBatch* b, uint32_t n, const uint8_t* lit,
                                   uint8_t* out, const L& lanes) {
  for (uint32_t i = lanes.lane; i < n; i += lanes.count) {
    const Sequence s = b->seq[i];
    if (s.literal_length + s.match_length > kShortSequence) continue;
    const uint32_t at = s.out + s.literal_length;
    if (s.offset >= at + s.match_length) {  // the source ends before the batch
      CopySequence(out + s.out, lit + s.lit, s.literal_length, out + at - s.offset, s.match_length);
    } else {
      CopyShort(out + s.out, lit + s.lit, s.literal_length);
      CopyTraced(b, n, lit, out, at, s.match_length);
    }
  }
  for (uint32_t j = 0; j < b->long_count; ++j) {
    const Sequence s = b->seq[b->long_seq[j]];
    CopyBytes(out + s.out, lit + s.lit, s.literal_length, lanes);
    const uint32_t at = s.out + s.literal_length;
    if (s.offset >= at + s.match_length) {
      CopyBytes(out + at, out + at - s.offset, s.match_length, lanes);
    } else {
      for (uint32_t k = lanes.lane; k < s.match_length; k += lanes.count) {
        out[at + k] = *BatchSource(b, n, lit, out, at + k);
      }
    }
  }
}

}  // namespace zarrd::decode::zstd
