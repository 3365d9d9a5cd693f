// The LZ4 block decoder against liblz4's encodings (through libblosc's lz4 and lz4hc splits).
#include "common/decode/lz4_block.h"

#include <gtest/gtest.h>

#include "common/decode/decode_test_util.h"

namespace zarrd::decode {
namespace {

using testing::Buffer;

std::vector<testing::Split> Lz4Splits(const char* cname) {
  std::vector<testing::Split> out;
  for (int kind = 0; kind < 4; ++kind) {
    for (int clevel : {1, 5, 9}) {
      for (size_t n : {1, 12, 13, 100, 5000, 70000}) {
        const Buffer data = testing::Payload(kind, n, kind * 31 + clevel);
        const Buffer c = testing::BloscCompress(data, cname, clevel, 0, 1, 4096);
        if (c.empty() || (c[2] & 0x2)) continue;  // memcpyed: no lz4 data in it
        for (auto& s : testing::SplitsOf(c, data)) {
          if (s.compressed.size() != s.original.size()) out.push_back(std::move(s));
        }
      }
    }
  }
  return out;
}

TEST(Lz4Block, DecodesLiblz4Blocks) {
  for (const char* cname : {"lz4", "lz4hc"}) {
    const auto splits = Lz4Splits(cname);
    ASSERT_GT(splits.size(), 10u) << cname;
    for (const auto& s : splits) {
      Buffer out(s.original.size(), 0xee);
      uint64_t written = 0;
      ASSERT_EQ(DecodeLz4Block(s.compressed.data(), s.compressed.size(), out.data(), out.size(),
                               &written),
                DecodeError::kOk);
      EXPECT_EQ(written, out.size());
      EXPECT_EQ(out, s.original);
    }
  }
}

TEST(Lz4Block, WrongOutputSizeIsAnError) {
  const auto splits = Lz4Splits("lz4");
  ASSERT_FALSE(splits.empty());
  const auto& s = splits.back();
  Buffer big(s.original.size() + 1), small(s.original.size() - 1);
  uint64_t written = 0;
  EXPECT_EQ(
      DecodeLz4Block(s.compressed.data(), s.compressed.size(), big.data(), big.size(), &written),
      DecodeError::kOutputShort);
  EXPECT_NE(DecodeLz4Block(s.compressed.data(), s.compressed.size(), small.data(), small.size(),
                           &written),
            DecodeError::kOk);
}

TEST(Lz4Block, HandMadeSequences) {
  // Literals "abcd", then a match of 8 at distance 4 (overlapping), then 5 last literals.
  const Buffer block = {0x44, 'a', 'b', 'c', 'd', 4, 0, 0x50, 'v', 'w', 'x', 'y', 'z'};
  Buffer out(17);
  uint64_t written = 0;
  ASSERT_EQ(DecodeLz4Block(block.data(), block.size(), out.data(), out.size(), &written),
            DecodeError::kOk);
  EXPECT_EQ(std::string(out.begin(), out.end()), "abcdabcdabcdvwxyz");
  Buffer zero_offset = block;
  zero_offset[5] = 0;
  EXPECT_EQ(
      DecodeLz4Block(zero_offset.data(), zero_offset.size(), out.data(), out.size(), &written),
      DecodeError::kCorrupt);
  Buffer far = block;
  far[5] = 5;  // reaches before the output's start
  EXPECT_EQ(DecodeLz4Block(far.data(), far.size(), out.data(), out.size(), &written),
            DecodeError::kCorrupt);
}

TEST(Lz4Block, TruncatedAndCorruptInputsFailCleanly) {
  const auto splits = Lz4Splits("lz4hc");
  ASSERT_FALSE(splits.empty());
  for (size_t i = 0; i < splits.size(); i += 7) {
    const auto& s = splits[i];
    Buffer out(s.original.size());
    uint64_t written = 0;
    for (size_t cut = 0; cut < s.compressed.size(); cut += 1 + s.compressed.size() / 50) {
      EXPECT_NE(DecodeLz4Block(s.compressed.data(), cut, out.data(), out.size(), &written),
                DecodeError::kOk);
      EXPECT_LE(written, out.size());
    }
    Buffer bad = s.compressed;
    for (size_t k = 0; k < bad.size(); k += 1 + bad.size() / 30) {
      bad[k] ^= 0x5a;
      (void)DecodeLz4Block(bad.data(), bad.size(), out.data(), out.size(), &written);
      EXPECT_LE(written, out.size());
    }
  }
}

}  // namespace
}  // namespace zarrd::decode
