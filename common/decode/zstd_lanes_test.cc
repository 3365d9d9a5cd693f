// The zstd decoders' parallel split (DecodeZstd's, and the block-parallel core's entropy and
// execution steps), run on the host by threads acting as the lanes of one warp
// (a barrier for Sync, a shared slot for Broadcast and Any), as the GPU kernel runs it: every
// lane must reach the same Syncs (else the threads hang: a watchdog fails the test), and the
// output and error must equal the one-lane decode's, whose bytes decode_tests checks against
// libzstd. Lane counts 5 and 32: four Huffman streams on lanes 0-3, copies strided by the count.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <future>
#include <memory>
#include <random>
#include <thread>

#include "common/decode/decode_test_util.h"
#include "common/decode/zstd_decode.h"
#include "common/decode/zstd_test_util.h"

namespace zarrd::decode {
namespace {

using namespace testing;

struct Warp {
  explicit Warp(uint32_t n) : barrier(n) {}
  std::barrier<> barrier;
  uint64_t slot = 0;
  uint64_t values[64] = {};
  std::atomic<bool> any{false};
};

struct ThreadLanes {
  uint32_t lane = 0;
  uint32_t count = 1;
  Warp* warp = nullptr;

  bool Leader() const { return lane == 0; }
  void Sync() const { warp->barrier.arrive_and_wait(); }
  uint64_t Broadcast(uint64_t v) const {
    Sync();  // the previous broadcast's readers are done
    if (lane == 0) warp->slot = v;
    Sync();
    return warp->slot;
  }
  DecodeError Broadcast(DecodeError e) const {
    return static_cast<DecodeError>(Broadcast(static_cast<uint64_t>(e)));
  }
  bool Any(bool b) const {
    Sync();
    if (lane == 0) warp->any = false;
    Sync();
    if (b) warp->any = true;
    Sync();
    return warp->any;
  }
  // Every lane's v, once all lanes have given theirs.
  const uint64_t* Gather(uint64_t v) const {
    Sync();  // the previous gather's readers are done
    warp->values[lane] = v;
    Sync();
    return warp->values;
  }
  uint64_t Shuffle(uint64_t v, uint32_t from) const { return Gather(v)[from]; }
  uint32_t ScanAdd(uint32_t v) const {
    const uint64_t* all = Gather(v);
    uint32_t sum = 0;
    for (uint32_t i = 0; i <= lane; ++i) sum += uint32_t(all[i]);
    return sum;
  }
  uint32_t Ballot(bool b) const {
    const uint64_t* all = Gather(b);
    uint32_t bits = 0;
    for (uint32_t i = 0; i < count; ++i) bits |= uint32_t(all[i]) << i;
    return bits;
  }
};

// Runs decode(lanes, &written) on `count` threads; every lane must return the same error and
// count.
template <class Decode>
DecodeError RunLanes(uint32_t count, const Decode& decode) {
  Warp warp(count);
  const auto results = RunOnThreads(count, [&](uint32_t lane) {
    uint64_t written = 0;
    const DecodeError e = decode(ThreadLanes{lane, count, &warp}, &written);
    warp.barrier.arrive_and_drop();
    return std::make_pair(e, written);
  });
  for (uint32_t lane = 1; lane < count; ++lane) {
    EXPECT_EQ(results[lane].first, results[0].first) << "lane " << lane;
    EXPECT_EQ(results[lane].second, results[0].second) << "lane " << lane;
  }
  return results[0].first;
}

// DecodeZstd with `count` lanes.
DecodeError DecodeWithLanes(const Buffer& src, size_t dst_size, uint32_t count, Buffer* out) {
  static std::unique_ptr<ZstdWorkspace> ws(new ZstdWorkspace);
  out->assign(dst_size, 0);
  return RunLanes(count, [&](const ThreadLanes& lanes, uint64_t* written) {
    return DecodeZstd(src.data(), src.size(), out->data(), dst_size, written, ws.get(), lanes);
  });
}

// The block-parallel core as the GPU runs it: the split on one lane, then each block's entropy
// decoding and the execution on `count` lanes.
DecodeError DecodeBlocksWithLanes(const Buffer& src, size_t dst_size, uint32_t count, Buffer* out) {
  static std::unique_ptr<ZstdBlockScratch> scratch(new ZstdBlockScratch);
  out->assign(dst_size, 0);
  zstd::TaskSplit s = scratch->For(dst_size);
  zstd::SplitTask(src.data(), src.size(), dst_size, &s);
  return RunLanes(count, [&](const ThreadLanes& lanes, uint64_t* written) {
    for (uint32_t i = 0; i < s.count; ++i) {
      zstd::DecodeBlockEntropy(src.data(), &s.blocks[i], s.region, scratch->tables(), lanes);
    }
    return zstd::ExecuteTask(src.data(), s, out->data(), dst_size, written, scratch->batch(),
                             lanes);
  });
}

TEST(ZstdLanes, ManyLanesDecodeLikeOne) {
  std::mt19937 rng(11);
  uint32_t seed = 1;
  int damaged_errors = 0;
  for (DataKind kind : kAllKinds) {
    for (int level : {-5, 3, 19}) {
      CompressOptions o;
      o.level = level;
      o.checksum = seed % 2;
      o.content_size = seed % 3 != 0;
      const Buffer data = MakeData(kind, 3000 + 2000 * (seed % 5), seed);
      ++seed;
      Buffer frames = LibCompress(data, o);
      const Buffer second = LibCompress(MakeData(kind, 700, seed), o);  // a second frame
      frames.insert(frames.end(), second.begin(), second.end());
      for (bool damaged : {false, true}) {
        Buffer src = frames;
        if (damaged) src[rng() % src.size()] ^= uint8_t(1 << (rng() % 8));
        const size_t size = data.size() + 700;
        Buffer one, many, blocks_one;
        const DecodeError want = OurDecompress(src.data(), src.size(), size, &one);
        const DecodeError blocks_want =
            OurDecompress(src.data(), src.size(), size, &blocks_one, ZstdCore::kBlocks);
        ASSERT_EQ(blocks_want == DecodeError::kOk, want == DecodeError::kOk);
        if (!damaged) {
          ASSERT_EQ(want, DecodeError::kOk) << DataKindName(kind) << " " << level;
        }
        if (want != DecodeError::kOk) ++damaged_errors;
        for (uint32_t count : {5u, 32u}) {
          const DecodeError got = DecodeWithLanes(src, size, count, &many);
          ASSERT_EQ(got, want) << DataKindName(kind) << " level " << level << " lanes " << count;
          if (want == DecodeError::kOk) {
            ASSERT_TRUE(many == one)
                << DataKindName(kind) << " level " << level << " lanes " << count;
          }
          const DecodeError blocks_got = DecodeBlocksWithLanes(src, size, count, &many);
          ASSERT_EQ(blocks_got, blocks_want)
              << DataKindName(kind) << " level " << level << " lanes " << count << " (blocks)";
          if (blocks_want == DecodeError::kOk) {
            ASSERT_TRUE(many == one)
                << DataKindName(kind) << " level " << level << " lanes " << count << " (blocks)";
          }
        }
      }
    }
  }
  EXPECT_GT(damaged_errors, 5);
}

}  // namespace
}  // namespace zarrd::decode
