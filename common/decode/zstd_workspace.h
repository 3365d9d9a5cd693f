// The state a zstd frame decoder keeps between blocks and the lanes that share it. One
// ZstdWorkspace per decoder: a host thread, or a warp on the GPU (each warp owns one slot). The
// part read for every literal and sequence (the decoding tables and the batch of decoded
// sequences, ZstdTables) is separate so that the GPU kernel can keep it in shared memory.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_fse.h"
#include "common/decode/zstd_huffman.h"

namespace zarrd::decode {

namespace zstd {

constexpr uint32_t kBlockMax = 128 * 1024;  // the largest block content (and literal section)
constexpr uint32_t kLiteralsLogMax = 9;
constexpr uint32_t kMatchLogMax = 9;
constexpr uint32_t kOffsetLogMax = 8;
constexpr uint32_t kSequenceBatch = 32;  // sequences decoded before the lanes execute them

// A decoded sequence, placed: its literals start `lit` bytes and its output `out` bytes after
// those of the first sequence of its batch (sums of the lengths before it, at most 32 sequences
// of at most 2^18 bytes each, so 32 bits suffice).
struct Sequence {
  uint32_t literal_length;
  uint32_t match_length;
  uint32_t offset;
  uint32_t lit;
  uint32_t out;
};

// A batch of decoded sequences that the lanes execute at once (zstd_execute.h), and those of
// its sequences longer than kShortSequence (indices into seq), which all lanes copy together
// after each lane has copied its short ones.
struct SequenceBatch {
  Sequence seq[kSequenceBatch];
  uint8_t long_seq[kSequenceBatch];
  uint32_t long_count;
};

// The lanes running one decoder: on the GPU the 32 lanes of a warp (count 32), on the host one
// (count 1; the tests give other counts with lanes of their own). Serial steps run on lane 0 and
// their results reach the others through Broadcast or the workspace after Sync; copies are split
// across all lanes.
struct Lanes {
  uint32_t lane = 0;
  uint32_t count = 1;

  ZARRD_HD bool Leader() const { return lane == 0; }
  ZARRD_HD void Sync() const {
#if defined(__CUDA_ARCH__)
    if (count > 1) __syncwarp();
#endif
  }
  ZARRD_HD uint64_t Broadcast(uint64_t v) const {
#if defined(__CUDA_ARCH__)
    if (count > 1) return __shfl_sync(0xffffffffu, static_cast<unsigned long long>(v), 0);
#endif
    return v;
  }
  ZARRD_HD DecodeError Broadcast(DecodeError e) const {
    return static_cast<DecodeError>(Broadcast(static_cast<uint64_t>(e)));
  }
  ZARRD_HD bool Any(bool b) const {
#if defined(__CUDA_ARCH__)
    if (count > 1) return __any_sync(0xffffffffu, b);
#endif
    return b;
  }
  // Lane `from`'s v, in every lane.
  ZARRD_HD uint64_t Shuffle(uint64_t v, uint32_t from) const {
#if defined(__CUDA_ARCH__)
    if (count > 1) return __shfl_sync(0xffffffffu, static_cast<unsigned long long>(v), from);
#endif
    return v;
  }
  // The sum of v over lanes 0..lane.
  ZARRD_HD uint32_t ScanAdd(uint32_t v) const {
#if defined(__CUDA_ARCH__)
    if (count > 1) {
      for (uint32_t d = 1; d < 32; d <<= 1) {
        const uint32_t below = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += below;
      }
    }
#endif
    return v;
  }
  // Bit i set when lane i's b is.
  ZARRD_HD uint32_t Ballot(bool b) const {
#if defined(__CUDA_ARCH__)
    if (count > 1) return __ballot_sync(0xffffffffu, b);
#endif
    return b ? 1u : 0u;
  }
};

// The three FSE tables of the sequences.
struct SequenceTables {
  FseEntry ll[1 << kLiteralsLogMax];
  FseEntry ml[1 << kMatchLogMax];
  FseEntry of[1 << kOffsetLogMax];
  uint32_t ll_log, ml_log, of_log;
};

// What every literal and sequence reads: the entropy tables, which persist across the blocks of
// a frame for the repeat modes, the repeat offsets and a batch of decoded sequences. About 19 KiB.
struct ZstdTables {
  HufEntry huf[1 << kHufMaxLog];
  SequenceTables fse;
  uint32_t huf_log;  // 0: no table yet in this frame (treeless literals are corrupt)
  bool fse_valid;    // tables exist for the repeat mode
  uint32_t rep[3];
  SequenceBatch batch;
};

}  // namespace zstd

// Everything a frame decoder needs besides its input and output: the tables (the host's decoder
// uses these; the GPU kernel passes its own in shared memory), scratch for reading table
// descriptions and a literal buffer. About 170 KiB.
struct ZstdWorkspace {
  zstd::ZstdTables tables;
  zstd::HufScratch huf_scratch;
  zstd::WeightScratch weight_scratch;
  int16_t norm[64];
  uint16_t next[64];
  uint8_t literals[zstd::kBlockMax];
};

constexpr uint64_t kZstdWorkspaceSize = sizeof(ZstdWorkspace);

}  // namespace zarrd::decode
