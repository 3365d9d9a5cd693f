// The block-parallel zstd decoder: the GPU's (common/cuda/zstd_kernel.cu), run here in order on
// one lane. It decodes what DecodeZstd (zstd_decode.h) decodes, with the same bounds, but in three
// steps so that the blocks of a frame are entropy-decoded at once:
//
//   1. split (zstd_block_split.h), per task: frame and block headers and the section headers of
//      compressed blocks, without entropy decoding; each block records the descriptions its
//      tables come from (its own or an earlier block's), and its literals and sequences get
//      places in the task's region.
//   2. entropy (zstd_block_entropy.h), per compressed block, independent of the others: tables,
//      literals and sequences into the block's places, offsets that repeat those of earlier
//      blocks kept symbolic (SymbolicOffset).
//   3. execute (zstd_block_execute.h), per task: the blocks in order, each starting with the
//      repeat offsets the one before left; a lane a sequence makes its offset concrete, prefix
//      sums across the lanes place and check a batch, the lanes execute it; then the frames'
//      content size and checksum checks. No step is serial per sequence but the entropy step's
//      bit stream.
//
// Errors: the first in the order of the input (a block's entropy error counts when execution
// reaches the block). The split's lower bound of the output (literals and 3 bytes a sequence)
// rejects input that cannot fit dst before the region is used, so the region of a task of N
// output bytes is at most 4 N + 64 bytes (RegionSize) and its blocks at most N / 1024 + 16
// (SplitCapacity; a task of more blocks is kUnsupported).
#pragma once

#include <cstdint>
#include <vector>

#include "common/decode/zstd_block_entropy.h"
#include "common/decode/zstd_block_execute.h"
#include "common/decode/zstd_block_split.h"

namespace zarrd::decode {

// Scratch of the host's block-parallel decoder, grown to the largest task decoded.
class ZstdBlockScratch {
 public:
  zstd::TaskSplit For(uint64_t dst_size) {
    zstd::TaskSplit s;
    const uint32_t capacity = zstd::SplitCapacity(dst_size);
    if (blocks_.size() < capacity) blocks_.resize(capacity);
    const uint64_t region = zstd::RegionSize(dst_size);
    if (region_.size() < region) region_.resize(region);
    s.blocks = blocks_.data();
    s.capacity = capacity;
    s.region = region_.data();
    s.region_size = region;
    return s;
  }
  zstd::BlockTables* tables() { return &tables_; }
  zstd::SequenceBatch* batch() { return &batch_; }

 private:
  std::vector<zstd::SplitBlock> blocks_;
  std::vector<uint8_t> region_;
  zstd::BlockTables tables_;
  zstd::SequenceBatch batch_;
};

// Decodes every frame of src[0..src_size) into exactly dst[0..dst_size) as DecodeZstd does, by
// the three steps in order on one lane.
inline DecodeError DecodeZstdBlocks(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                    uint64_t dst_size, uint64_t* written,
                                    ZstdBlockScratch* scratch) {
  zstd::TaskSplit s = scratch->For(dst_size);
  zstd::SplitTask(src, src_size, dst_size, &s);
  for (uint32_t i = 0; i < s.count; ++i) {
    zstd::DecodeBlockEntropy(src, &s.blocks[i], s.region, scratch->tables(), zstd::Lanes{});
  }
  return zstd::ExecuteTask(src, s, dst, dst_size, written, scratch->batch(), zstd::Lanes{});
}

}  // namespace zarrd::decode
