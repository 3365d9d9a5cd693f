// The blosclz decoder against libblosc's blosclz splits.
#include "common/decode/blosclz.h"

#include <gtest/gtest.h>

#include "common/decode/decode_test_util.h"

namespace zarrd::decode {
namespace {

using testing::Buffer;

std::vector<testing::Split> BlosclzSplits() {
  std::vector<testing::Split> out;
  for (int kind = 0; kind < 4; ++kind) {
    for (int clevel = 1; clevel <= 9; ++clevel) {
      for (size_t n : {1, 40, 100, 5000, 100000}) {
        const Buffer data = testing::Payload(kind, n, kind * 7 + clevel);
        for (size_t blocksize : {size_t{4096}, size_t{65536}}) {
          const Buffer c = testing::BloscCompress(data, "blosclz", clevel, 0, 1, blocksize);
          if (c.empty() || (c[2] & 0x2)) continue;
          for (auto& s : testing::SplitsOf(c, data)) {
            if (s.compressed.size() != s.original.size()) out.push_back(std::move(s));
          }
        }
      }
    }
  }
  return out;
}

TEST(Blosclz, DecodesLibbloscSplits) {
  const auto splits = BlosclzSplits();
  ASSERT_GT(splits.size(), 50u);
  size_t far = 0;
  for (const auto& s : splits) {
    Buffer out(s.original.size(), 0xee);
    uint64_t written = 0;
    ASSERT_EQ(
        DecodeBlosclz(s.compressed.data(), s.compressed.size(), out.data(), out.size(), &written),
        DecodeError::kOk);
    EXPECT_EQ(written, out.size());
    EXPECT_EQ(out, s.original);
    far += s.original.size() > 8192;
  }
  EXPECT_GT(far, 0u) << "no block long enough for 16-bit distances";
}

TEST(Blosclz, HandMadeStream) {
  // 3 literals "xyz", then a match of 6 at distance 3: ctrl (6 - 2) << 5 | 0, distance byte 2.
  const Buffer stream = {2, 'x', 'y', 'z', 4 << 5, 2, 0, '!'};
  Buffer out(10);
  uint64_t written = 0;
  ASSERT_EQ(DecodeBlosclz(stream.data(), stream.size(), out.data(), out.size(), &written),
            DecodeError::kOk);
  EXPECT_EQ(std::string(out.begin(), out.end()), "xyzxyzxyz!");
  Buffer before = stream;
  before[5] = 3;  // distance 4 from position 3
  EXPECT_EQ(DecodeBlosclz(before.data(), before.size(), out.data(), out.size(), &written),
            DecodeError::kCorrupt);
}

TEST(Blosclz, TruncatedAndCorruptInputsFailCleanly) {
  const auto splits = BlosclzSplits();
  for (size_t i = 0; i < splits.size(); i += 11) {
    const auto& s = splits[i];
    Buffer out(s.original.size());
    uint64_t written = 0;
    for (size_t cut = 0; cut < s.compressed.size(); cut += 1 + s.compressed.size() / 40) {
      EXPECT_NE(DecodeBlosclz(s.compressed.data(), cut, out.data(), out.size(), &written),
                DecodeError::kOk);
    }
    Buffer bad = s.compressed;
    for (size_t k = 0; k < bad.size(); k += 1 + bad.size() / 30) {
      bad[k] ^= 0xa5;
      (void)DecodeBlosclz(bad.data(), bad.size(), out.data(), out.size(), &written);
      EXPECT_LE(written, out.size());
    }
  }
}

}  // namespace
}  // namespace zarrd::decode
