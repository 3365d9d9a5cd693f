// The execute step with the blocks of a task executing at once, as the GPU's warps execute them:
// here a thread a block, started in a shuffled order after random delays, each waiting through
// BlockProgress for the earlier blocks' bytes its matches reach. The output must equal libzstd's,
// and on damaged input the error and the bytes written must equal the in-order execution's
// (ExecuteTask, whose errors zstd_corrupt_test.cc holds to libzstd's verdicts).
#include "common/decode/zstd_block_execute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>

#include "common/decode/zstd_test_util.h"

namespace zarrd::decode {
namespace {

using namespace testing;

// The progress words between host threads; counts the polls that found bytes not yet final, and
// ends the test when a wait outlasts `deadline` (a block waiting for one that never publishes).
struct ThreadAtomics {
  std::atomic<uint64_t>* early_polls;
  std::chrono::steady_clock::time_point deadline;
  uint32_t Load(uint32_t* word) const {
    return std::atomic_ref<uint32_t>(*word).load(std::memory_order_acquire);
  }
  template <class L>
  void Store(uint32_t* word, uint32_t value, const L&) const {
    std::atomic_ref<uint32_t>(*word).store(value, std::memory_order_release);
  }
  void Fence() const { std::atomic_thread_fence(std::memory_order_acquire); }
  void Pause() const {
    early_polls->fetch_add(1, std::memory_order_relaxed);
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "a block waited past the deadline for an earlier block\n");
      std::abort();  // the waiting threads cannot be joined
    }
    std::this_thread::yield();
  }
};

struct Outcome {
  DecodeError error = DecodeError::kOk;
  uint64_t written = 0;
  uint32_t runnable = 0;
};

// Splits and entropy-decodes src, then executes its blocks a thread each.
Outcome DecodeAtOnce(const Buffer& src, size_t dst_size, uint32_t seed, Buffer* out,
                     std::atomic<uint64_t>* early_polls) {
  auto scratch = std::make_unique<ZstdBlockScratch>();
  zstd::TaskSplit s = scratch->For(dst_size);
  zstd::SplitTask(src.data(), src.size(), dst_size, &s);
  for (uint32_t i = 0; i < s.count; ++i) {
    zstd::DecodeBlockEntropy(src.data(), &s.blocks[i], s.region, scratch->tables(), zstd::Lanes{});
  }
  Outcome o;
  o.runnable = zstd::PlanExecution(s, dst_size);
  out->assign(dst_size, 0);
  std::vector<uint32_t> order(o.runnable);
  for (uint32_t k = 0; k < o.runnable; ++k) order[k] = k;
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::thread> threads;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (uint32_t k : order) {
    const auto delay = std::chrono::microseconds(rng() % 3000);
    threads.emplace_back([&, k, delay] {
      std::this_thread::sleep_for(delay);
      auto batch = std::make_unique<zstd::SequenceBatch>();
      const zstd::BlockProgress<ThreadAtomics> progress{s.blocks, k, {early_polls, deadline}};
      const zstd::Lanes lanes;
      const DecodeError e =
          zstd::ExecuteBlock(src.data(), s, k, out->data(), dst_size, batch.get(), lanes, progress);
      if (e != DecodeError::kOk) s.blocks[k].error = e;
      progress.Publish(e == DecodeError::kOk ? uint32_t(s.blocks[k].out_size) : zstd::kBlockFailed,
                       lanes);
    });
  }
  for (std::thread& t : threads) t.join();
  o.error = zstd::FinishTask(s, out->data(), dst_size, &o.written, zstd::Lanes{});
  return o;
}

// In order, for the error and bytes written the concurrent execution must match.
Outcome DecodeInOrder(const Buffer& src, size_t dst_size, Buffer* out) {
  auto scratch = std::make_unique<ZstdBlockScratch>();
  out->assign(dst_size, 0);
  Outcome o;
  o.error =
      DecodeZstdBlocks(src.data(), src.size(), out->data(), dst_size, &o.written, scratch.get());
  return o;
}

TEST(ZstdBlockExecute, BlocksExecutingAtOnceGiveLibzstdsBytes) {
  std::atomic<uint64_t> early_polls{0};
  uint32_t seed = 1;
  int multi_block = 0;
  for (DataKind kind : kAllKinds) {
    for (int level : {1, 3, 19}) {
      CompressOptions o;
      o.level = level;
      o.checksum = seed % 2;
      const Buffer data = MakeData(kind, (size_t(1) << 20) - 7 * seed, seed);
      Buffer frames = LibCompress(data, o);
      const Buffer tail = MakeData(kind, 200000, seed + 100);  // a second frame
      const Buffer second = LibCompress(tail, o);
      frames.insert(frames.end(), second.begin(), second.end());
      Buffer want = data;
      want.insert(want.end(), tail.begin(), tail.end());
      Buffer got;
      const Outcome r = DecodeAtOnce(frames, want.size(), seed, &got, &early_polls);
      ASSERT_EQ(r.error, DecodeError::kOk) << DataKindName(kind) << " level " << level;
      ASSERT_TRUE(got == want) << DataKindName(kind) << " level " << level;
      EXPECT_EQ(r.written, want.size());
      multi_block += r.runnable > 2;
      ++seed;
    }
  }
  std::printf("%d tasks of more than two blocks; %llu polls found bytes not yet final\n",
              multi_block, static_cast<unsigned long long>(early_polls.load()));
  EXPECT_GT(multi_block, 20);
  EXPECT_GT(early_polls.load(), 0u);  // some matches did wait for an earlier block
}

TEST(ZstdBlockExecute, DamagedInputFailsAsInOrder) {
  std::atomic<uint64_t> early_polls{0};
  std::mt19937 rng(5);
  int failed = 0;
  for (int round = 0; round < 60; ++round) {
    const DataKind kind = kAllKinds[round % std::size(kAllKinds)];
    CompressOptions o;
    o.level = round % 2 ? 3 : 19;
    o.checksum = round % 3 == 0;
    o.content_size = round % 4 != 0;
    const Buffer data = MakeData(kind, 600000, uint32_t(round));
    Buffer src = LibCompress(data, o);
    for (int flips = 1 + int(rng() % 3); flips > 0; --flips) {
      src[rng() % src.size()] ^= uint8_t(1 << (rng() % 8));
    }
    const size_t dst_size = data.size() + (round % 5 == 0 ? 1000 : 0);
    Buffer in_order, at_once;
    const Outcome want = DecodeInOrder(src, dst_size, &in_order);
    const Outcome got = DecodeAtOnce(src, dst_size, uint32_t(round), &at_once, &early_polls);
    ASSERT_EQ(got.error, want.error) << "round " << round;
    ASSERT_EQ(got.written, want.written) << "round " << round;
    if (want.error == DecodeError::kOk) {
      ASSERT_TRUE(at_once == in_order) << "round " << round;
    }
    failed += want.error != DecodeError::kOk;
  }
  EXPECT_GT(failed, 20);
}

}  // namespace
}  // namespace zarrd::decode
