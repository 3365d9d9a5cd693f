// Batched sequence execution (zstd_execute.h) against a plain serial LZ77 executor written here:
// random batches of short and long sequences whose matches reach into the output before the
// batch, into earlier sequences of the batch and into themselves (offsets down to 1), executed
// by one lane and by 32 lanes run one after another in reverse order, which must give the same
// bytes because a batch's writes depend only on the literals and the output before it.
#include "common/decode/zstd_execute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

namespace zarrd::decode::zstd {
namespace {

// A batch as the test builds it: its sequences, placed, and their total lengths.
struct Batch {
  std::vector<Sequence> seq;
  uint32_t lit_length = 0, out_length = 0;
};

// A batch of up to kSequenceBatch sequences placed as DecodeSequenceBatch places them; offsets
// reach back at most `history` bytes before the batch.
Batch RandomBatch(std::mt19937& rng, uint32_t history) {
  Batch b;
  const uint32_t n = 1 + rng() % kSequenceBatch;
  for (uint32_t i = 0; i < n; ++i) {
    Sequence s{};
    const bool long_one = rng() % 8 == 0;
    s.literal_length = rng() % 3 == 0 ? 0 : rng() % (long_one ? 80 : 12);
    s.match_length = 3 + rng() % (long_one ? 120 : 20);
    const uint32_t reach = history + b.out_length + s.literal_length;  // bytes before the match
    const uint32_t kind = rng() % 4;
    const uint32_t most = kind == 0 ? 4 : kind == 1 ? 40 : reach;
    s.offset = 1 + rng() % std::min(most, reach);
    s.lit = b.lit_length;
    s.out = b.out_length;
    b.lit_length += s.literal_length;
    b.out_length += s.literal_length + s.match_length;
    b.seq.push_back(s);
  }
  return b;
}

void Load(const Batch& b, SequenceBatch* t) {
  t->long_count = 0;
  for (uint32_t i = 0; i < b.seq.size(); ++i) {
    t->seq[i] = b.seq[i];
    if (b.seq[i].literal_length + b.seq[i].match_length > kShortSequence) {
      t->long_seq[t->long_count++] = uint8_t(i);
    }
  }
}

// The RFC's execution, one byte after another.
void SerialExecute(const Batch& b, const uint8_t* lit, uint8_t* out) {
  uint32_t op = 0;
  for (const Sequence& s : b.seq) {
    for (uint32_t k = 0; k < s.literal_length; ++k) out[op++] = lit[s.lit + k];
    for (uint32_t k = 0; k < s.match_length; ++k, ++op) out[op] = out[int64_t(op) - s.offset];
  }
}

TEST(ZstdExecute, BatchesMatchSerialExecutionOnAnyLaneOrder) {
  std::mt19937 rng(17);
  std::unique_ptr<SequenceBatch> t(new SequenceBatch);
  constexpr uint32_t kHistory = 300;
  int traced = 0, long_ones = 0;
  for (int round = 0; round < 3000; ++round) {
    const Batch b = RandomBatch(rng, kHistory);
    Load(b, t.get());
    std::vector<uint8_t> lit(b.lit_length + 1);
    for (auto& c : lit) c = uint8_t(rng());
    std::vector<uint8_t> want(kHistory + b.out_length);
    for (uint32_t i = 0; i < kHistory; ++i) want[i] = uint8_t(rng() % 7);  // repeats, as data has
    std::vector<uint8_t> one = want, many = want;
    SerialExecute(b, lit.data(), want.data() + kHistory);
    for (const Sequence& s : b.seq) {
      traced += s.offset < s.out + s.literal_length + s.match_length;
      long_ones += s.literal_length + s.match_length > kShortSequence;
    }
    const uint32_t n = uint32_t(b.seq.size());
    ExecuteSequenceBatch(t.get(), n, lit.data(), one.data() + kHistory, Lanes{});
    ASSERT_TRUE(one == want) << "one lane, round " << round;
    for (uint32_t lane = 32; lane-- > 0;) {
      ExecuteSequenceBatch(t.get(), n, lit.data(), many.data() + kHistory, Lanes{lane, 32});
    }
    ASSERT_TRUE(many == want) << "32 lanes in reverse order, round " << round;
  }
  EXPECT_GT(traced, 10000);  // matches whose source reaches into their own batch
  EXPECT_GT(long_ones, 5000);
}

}  // namespace
}  // namespace zarrd::decode::zstd
