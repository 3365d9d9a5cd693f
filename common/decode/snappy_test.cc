// The snappy decoder against libsnappy's encodings (through libblosc's snappy splits).
#include "common/decode/snappy.h"

#include <blosc.h>
#include <gtest/gtest.h>

#include "common/decode/decode_test_util.h"

namespace zarrd::decode {
namespace {

using testing::Buffer;

TEST(Snappy, DecodesLibsnappyBlocks) {
  if (blosc_compname_to_compcode("snappy") < 0) GTEST_SKIP() << "libblosc lacks snappy";
  int decoded = 0;
  for (int kind = 0; kind < 4; ++kind) {
    for (size_t n : {1, 20, 100, 5000, 70000, 300000}) {
      const Buffer data = testing::Payload(kind, n, kind + 1);
      const Buffer c = testing::BloscCompress(data, "snappy", 5, 0, 1, 1 << 17);
      ASSERT_FALSE(c.empty());
      if (c[2] & 0x2) continue;
      for (const auto& s : testing::SplitsOf(c, data)) {
        if (s.compressed.size() == s.original.size()) continue;
        Buffer out(s.original.size());
        uint64_t written = 0;
        ASSERT_EQ(DecodeSnappy(s.compressed.data(), s.compressed.size(), out.data(), out.size(),
                               &written),
                  DecodeError::kOk);
        EXPECT_EQ(out, s.original);
        Buffer big(out.size() + 1);
        EXPECT_EQ(DecodeSnappy(s.compressed.data(), s.compressed.size(), big.data(), big.size(),
                               &written),
                  DecodeError::kOutputShort);
        for (size_t cut = 0; cut < s.compressed.size(); cut += 1 + s.compressed.size() / 30) {
          EXPECT_NE(DecodeSnappy(s.compressed.data(), cut, out.data(), out.size(), &written),
                    DecodeError::kOk);
        }
        ++decoded;
      }
    }
  }
  EXPECT_GE(decoded, 5);
}

TEST(Snappy, HandMadeStream) {
  // Length 9; literal "abc"; copy of 6 at offset 3 (1-byte-offset form: len 6 = 2 + 4).
  const Buffer stream = {9, 2 << 2, 'a', 'b', 'c', (2 << 2) | 1, 3};
  Buffer out(9);
  uint64_t written = 0;
  ASSERT_EQ(DecodeSnappy(stream.data(), stream.size(), out.data(), out.size(), &written),
            DecodeError::kOk);
  EXPECT_EQ(std::string(out.begin(), out.end()), "abcabcabc");
  Buffer zero = stream;
  zero[6] = 0;
  EXPECT_EQ(DecodeSnappy(zero.data(), zero.size(), out.data(), out.size(), &written),
            DecodeError::kCorrupt);
}

}  // namespace
}  // namespace zarrd::decode
