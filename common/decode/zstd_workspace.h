// The state a zstd frame decoder keeps between blocks and the lanes that share it. One
// ZstdWorkspace per decoder: a host thread, or a warp on the GPU (each warp owns one slot).
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
constexpr uint32_t kSequenceBatch = 128;  // sequences decoded before the lanes execute them

struct Sequence {
  uint32_t literal_length;
  uint32_t match_length;
  uint64_t offset;
};

// The lanes running one decoder: on the GPU the 32 lanes of a warp (count 32), on the host one
// (count 1). Serial steps run on lane 0 and their results reach the others through Broadcast or
// the workspace after Sync; copies are split across all lanes.
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
};

}  // namespace zstd

// Everything a frame decoder needs besides its input and output: entropy tables, which persist
// across the blocks of a frame for the repeat modes, the repeat offsets, a literal buffer and a
// batch of decoded sequences. About 150 KiB.
struct ZstdWorkspace {
  zstd::HufEntry huf[1 << zstd::kHufMaxLog];
  uint32_t huf_log;  // 0: no table yet in this frame (treeless literals are corrupt)
  zstd::HufScratch huf_scratch;

  zstd::FseEntry ll[1 << zstd::kLiteralsLogMax];
  zstd::FseEntry ml[1 << zstd::kMatchLogMax];
  zstd::FseEntry of[1 << zstd::kOffsetLogMax];
  uint32_t ll_log, ml_log, of_log;
  bool fse_valid;  // tables exist for the repeat mode
  int16_t norm[64];
  uint16_t next[64];

  uint64_t rep[3];
  zstd::Sequence seq[zstd::kSequenceBatch];
  uint8_t literals[zstd::kBlockMax];
};

constexpr uint64_t kZstdWorkspaceSize = sizeof(ZstdWorkspace);

}  // namespace zarrd::decode
