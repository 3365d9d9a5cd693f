// The block-parallel zstd core's own properties (its output against libzstd's is in
// zstd_decode_test.cc and zstd_corrupt_test.cc, which run both cores): the split makes blocks
// independent (tables described by earlier blocks: treeless literals and the repeat mode; repeat
// offsets reaching across block boundaries), so their entropy decoding in any order, with the
// tables' memory garbage in between, gives libzstd's bytes; the split's bounds (block capacity,
// output lower bound) give errors before any scratch is used.
#include "common/decode/zstd_blocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>

#include "common/decode/zstd_test_util.h"

namespace zarrd::decode {
namespace {

using namespace testing;

struct CrossBlock {
  int blocks = 0, raw_or_rle = 0, treeless_from_earlier = 0, repeat_from_earlier = 0,
      first_sequence_repeats = 0;
};

// Splits and entropy-decodes the blocks of `frame` last to first, the tables' memory scribbled
// over before each, then executes; counts what crosses blocks.
DecodeError DecodeBackwards(const Buffer& frame, size_t dst_size, Buffer* out, CrossBlock* c) {
  static std::unique_ptr<ZstdBlockScratch> scratch(new ZstdBlockScratch);
  zstd::TaskSplit s = scratch->For(dst_size);
  zstd::SplitTask(frame.data(), frame.size(), dst_size, &s);
  for (uint32_t i = s.count; i-- > 0;) {
    std::memset(scratch->tables()->bytes, 0xA5, sizeof(scratch->tables()->bytes));
    zstd::DecodeBlockEntropy(frame.data(), &s.blocks[i], s.region, scratch->tables(),
                             zstd::Lanes{});
  }
  for (uint32_t i = 0; i < s.count; ++i) {
    const zstd::SplitBlock& b = s.blocks[i];
    ++c->blocks;
    if (b.kind != zstd::kCompressedBlock) {
      ++c->raw_or_rle;
      continue;
    }
    if (b.lit_type == 3 && b.huf_at < b.src) ++c->treeless_from_earlier;
    for (const zstd::TableSource* t : {&b.ll, &b.of, &b.ml}) {
      if (b.seq_count > 0 && t->mode != 0 && t->at < b.src) ++c->repeat_from_earlier;
    }
    const auto* raw = reinterpret_cast<const zstd::RawSequence*>(s.region + b.seq_place);
    if (!(b.flags & zstd::kFirstInFrame) && b.seq_count > 0 && b.error == DecodeError::kOk &&
        (raw[0].tag_literal_length >> zstd::kTagShift) != 0) {
      ++c->first_sequence_repeats;
    }
  }
  out->assign(dst_size, 0);
  uint64_t written = 0;
  return zstd::ExecuteTask(frame.data(), s, out->data(), dst_size, &written, scratch->batch(),
                           zstd::Lanes{});
}

TEST(ZstdBlocks, BlocksDecodeInAnyOrderAndReferToEarlierOnes) {
  CrossBlock c;
  uint32_t seed = 1;
  for (DataKind kind : kAllKinds) {
    for (int level : {-5, 1, 3, 9, 19}) {
      for (size_t size : {size_t(300000), size_t(1) << 20}) {
        CompressOptions o;
        o.level = level;
        o.checksum = seed % 2;
        const Buffer data = MakeData(kind, size, seed++);
        const Buffer frame = LibCompress(data, o);
        Buffer ours;
        ASSERT_EQ(DecodeBackwards(frame, data.size(), &ours, &c), DecodeError::kOk)
            << DataKindName(kind) << " level " << level;
        ASSERT_TRUE(ours == data) << DataKindName(kind) << " level " << level;
      }
    }
  }
  std::printf(
      "%d blocks: %d raw or RLE, %d treeless from earlier blocks, %d tables repeated "
      "from earlier blocks, %d blocks opening with a repeat offset\n",
      c.blocks, c.raw_or_rle, c.treeless_from_earlier, c.repeat_from_earlier,
      c.first_sequence_repeats);
  EXPECT_GT(c.raw_or_rle, 0);
  EXPECT_GT(c.treeless_from_earlier, 0);
  EXPECT_GT(c.repeat_from_earlier, 0);
  EXPECT_GT(c.first_sequence_repeats, 0);
}

// Repeat offsets resolved symbolically (as the entropy step does, not knowing the repeat offsets
// a block starts with) and then made concrete equal those resolved in order, for random
// sequences heavy in repeat codes, including "repeat offset 0 less 1" down to its floor of 1.
TEST(ZstdBlocks, SymbolicRepeatOffsetsResolveAsInOrder) {
  std::mt19937 rng(23);
  for (int round = 0; round < 20000; ++round) {
    uint32_t start[3];
    for (uint32_t& r : start) r = 1 + rng() % (rng() % 2 ? 4 : 100000);
    uint32_t known[3] = {start[0], start[1], start[2]};
    uint32_t rep[3] = {0, 0, 0}, tag[3] = {1, 2, 3};
    const int n = 1 + int(rng() % 12);
    for (int i = 0; i < n; ++i) {
      const uint32_t offset_value = rng() % 8 == 0 ? 4 + rng() % 50 : 1 + rng() % 3;
      const uint32_t literal_length = rng() % 2 ? 0 : 1 + rng() % 5;
      const uint32_t want = zstd::ResolveOffset(offset_value, literal_length, known);
      uint32_t value = 0, value_tag = 0;
      zstd::SymbolicOffset(offset_value, literal_length, rep, tag, &value, &value_tag);
      ASSERT_EQ(zstd::Concrete(value, value_tag, start), want) << "round " << round;
    }
    for (int k = 0; k < 3; ++k) ASSERT_EQ(zstd::Concrete(rep[k], tag[k], start), known[k]);
  }
}

TEST(ZstdBlocks, MoreBlocksThanTheCapacityAreUnsupported) {
  const uint32_t room = zstd::SplitCapacity(100);
  Buffer lib, ours;
  for (uint32_t n : {room, room + 1}) {
    const Buffer frame = OneByteBlocks(MakeData(DataKind::kText, n, n));
    ASSERT_TRUE(LibDecompress(frame.data(), frame.size(), n, &lib));
    EXPECT_EQ(OurDecompress(frame.data(), frame.size(), n, &ours, ZstdCore::kFrames),
              DecodeError::kOk);
    EXPECT_EQ(OurDecompress(frame.data(), frame.size(), n, &ours, ZstdCore::kBlocks),
              n <= room ? DecodeError::kOk : DecodeError::kUnsupported);
    if (n <= room) {
      EXPECT_TRUE(ours == lib);
    }
  }
}

TEST(ZstdBlocks, OutputLowerBoundStopsTheSplit) {
  // Literals alone (a block without sequences) of more bytes than the destination holds: the
  // split rejects the block before its literals take region space.
  const Buffer data = MakeData(DataKind::kText, 50000, 4);
  const Buffer frame = LibCompress(data, CompressOptions{});
  zstd::TaskSplit s;
  std::vector<zstd::SplitBlock> blocks(zstd::SplitCapacity(100));
  std::vector<uint8_t> region(zstd::RegionSize(100));
  s.blocks = blocks.data();
  s.capacity = uint32_t(blocks.size());
  s.region = region.data();
  s.region_size = region.size();
  zstd::SplitTask(frame.data(), frame.size(), 100, &s);
  EXPECT_EQ(s.error, DecodeError::kOutputOverrun);
  EXPECT_EQ(s.count, 0u);
}

}  // namespace
}  // namespace zarrd::decode
