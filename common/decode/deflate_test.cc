// Inflate and its zlib/gzip wrappers against zlib: every level and strategy (stored, fixed and
// dynamic blocks, checked in the streams), gzip header fields and several members, numcodecs'
// vectors, every gzip chunk of the peer fixtures, and corrupt or truncated streams.
#include "common/decode/deflate.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <memory>
#include <set>

#include "common/decode/decode_test_util.h"
#include "common/testing/test_util.h"

namespace zarrd::decode {
namespace {

using testing::Buffer;

DecodeError OursZlib(const Buffer& c, size_t size, Buffer* out) {
  out->assign(size, 0xcd);
  auto ws = std::make_unique<InflateWorkspace>();
  uint64_t written = 0;
  const DecodeError e = DecodeZlib(c.data(), c.size(), out->data(), size, &written, ws.get());
  EXPECT_LE(written, size);
  return e;
}

DecodeError OursGzip(const Buffer& c, size_t size, Buffer* out) {
  out->assign(size, 0xcd);
  auto ws = std::make_unique<InflateWorkspace>();
  uint64_t written = 0;
  const DecodeError e = DecodeGzip(c.data(), c.size(), out->data(), size, &written, ws.get());
  EXPECT_LE(written, size);
  return e;
}

TEST(Deflate, EveryLevelAndStrategyCoversAllBlockTypes) {
  std::set<int> first_block_types;
  int cases = 0;
  for (int strategy : {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED}) {
    for (int level = 0; level <= 9; ++level) {
      for (int kind = 0; kind < 4; ++kind) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{300}, size_t{70001}, size_t{300000}}) {
          SCOPED_TRACE(::testing::Message() << "strategy " << strategy << " level " << level
                                            << " kind " << kind << " size " << n);
          const Buffer data = testing::Payload(kind, n, level * 10 + kind);
          const Buffer z = testing::ZlibDeflate(data, level, strategy, 15);
          first_block_types.insert((z[2] >> 1) & 3);
          Buffer expected, out;
          ASSERT_TRUE(testing::ZlibInflate(z, 15, &expected));
          ASSERT_EQ(expected, data);
          ASSERT_EQ(OursZlib(z, n, &out), DecodeError::kOk);
          ASSERT_EQ(out, data);
          const Buffer g = testing::ZlibDeflate(data, level, strategy, 31);
          ASSERT_EQ(OursGzip(g, n, &out), DecodeError::kOk);
          ASSERT_EQ(out, data);
          ++cases;
        }
      }
    }
  }
  std::cout << cases << " streams\n";
  EXPECT_EQ(first_block_types, (std::set<int>{0, 1, 2})) << "stored, fixed and dynamic blocks";
}

TEST(Deflate, GzipHeaderFieldsAndSeveralMembers) {
  const Buffer a = testing::Payload(0, 5000, 1), b = testing::Payload(3, 7000, 2);
  char name[] = "chunk.0.0", comment[] = "from zlib";
  Bytef extra[] = {'z', 'r', 3, 0, 1, 2, 3};
  gz_header header{};
  header.name = reinterpret_cast<Bytef*>(name);
  header.comment = reinterpret_cast<Bytef*>(comment);
  header.extra = extra;
  header.extra_len = sizeof extra;
  header.hcrc = 1;
  Buffer both = testing::ZlibDeflate(a, 6, Z_DEFAULT_STRATEGY, 31, &header);
  const Buffer second = testing::ZlibDeflate(b, 1, Z_DEFAULT_STRATEGY, 31);
  both.insert(both.end(), second.begin(), second.end());
  Buffer expected, out;
  ASSERT_TRUE(testing::ZlibInflate(both, 31, &expected));
  Buffer ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  ASSERT_EQ(expected, ab);
  ASSERT_EQ(OursGzip(both, ab.size(), &out), DecodeError::kOk);
  EXPECT_EQ(out, ab);
  Buffer bad = both;
  bad[14] ^= 1;  // inside the header, covered by its CRC
  EXPECT_EQ(OursGzip(bad, ab.size(), &out), DecodeError::kChecksum);
}

void NumcodecsVectors(const char* codec, int window_bits) {
  const auto root = std::filesystem::path(zarrd::testing::FixturesDir()) / "numcodecs" / codec;
  int decoded = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".dat") continue;
    SCOPED_TRACE(e.path().string());
    const Buffer c = testing::ReadBytes(e.path().string());
    Buffer expected, out;
    ASSERT_TRUE(testing::ZlibInflate(c, window_bits, &expected));
    const DecodeError err =
        window_bits > 15 ? OursGzip(c, expected.size(), &out) : OursZlib(c, expected.size(), &out);
    ASSERT_EQ(err, DecodeError::kOk);
    EXPECT_EQ(out, expected);
    ++decoded;
  }
  std::cout << decoded << " numcodecs " << codec << " vectors\n";
  EXPECT_GT(decoded, 50);
}

TEST(Deflate, NumcodecsGzipVectors) { NumcodecsVectors("gzip", 31); }
TEST(Deflate, NumcodecsZlibVectors) { NumcodecsVectors("zlib", 15); }

TEST(Deflate, EveryGzipChunkOfThePeerFixtures) {
  int decoded = 0;
  for (const auto& path : testing::FixtureFiles()) {
    const Buffer c = testing::ReadBytes(path);
    Buffer expected, out;
    if (c.size() < 18 || c[0] != 0x1f || c[1] != 0x8b || !testing::ZlibInflate(c, 31, &expected))
      continue;
    SCOPED_TRACE(path);
    ASSERT_EQ(OursGzip(c, expected.size(), &out), DecodeError::kOk);
    EXPECT_EQ(out, expected);
    ++decoded;
  }
  std::cout << decoded << " gzip chunks of the peer fixtures\n";
  EXPECT_GT(decoded, 10);
}

TEST(Deflate, TruncatedAndCorruptStreamsFailCleanly) {
  for (int level : {0, 1, 6, 9}) {
    for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED}) {
      const Buffer data = testing::Payload(3, 30000, level);
      const Buffer z = testing::ZlibDeflate(data, level, strategy, 15);
      const Buffer g = testing::ZlibDeflate(data, level, strategy, 31);
      Buffer out, expected;
      for (size_t cut = 0; cut < z.size(); cut += 1 + z.size() / 300) {
        EXPECT_NE(OursZlib(Buffer(z.begin(), z.begin() + cut), data.size(), &out),
                  DecodeError::kOk);
        EXPECT_NE(OursGzip(Buffer(g.begin(), g.begin() + cut), data.size(), &out),
                  DecodeError::kOk);
      }
      for (size_t k = 0; k < z.size(); k += 1 + z.size() / 500) {
        Buffer bad = z;
        bad[k] ^= 0x10;
        // Where ours accepts, zlib accepts and agrees (a checksum makes both unlikely).
        if (OursZlib(bad, data.size(), &out) == DecodeError::kOk) {
          ASSERT_TRUE(testing::ZlibInflate(bad, 15, &expected));
          EXPECT_EQ(out, expected);
        }
      }
    }
  }
  const Buffer data = testing::Payload(1, 1000, 0);
  const Buffer z = testing::ZlibDeflate(data, 6, Z_DEFAULT_STRATEGY, 15);
  Buffer out;
  EXPECT_EQ(OursZlib(z, 999, &out), DecodeError::kOutputOverrun);
  EXPECT_EQ(OursZlib(z, 1001, &out), DecodeError::kOutputShort);
  Buffer bad = z;
  bad[bad.size() - 1] ^= 1;
  EXPECT_EQ(OursZlib(bad, 1000, &out), DecodeError::kChecksum);
  bad = z;
  bad.push_back(0);
  EXPECT_EQ(OursZlib(bad, 1000, &out), DecodeError::kCorrupt);
  // A stored block whose length and its complement disagree.
  const Buffer stored = {0x78, 0x01, 0x01, 0x05, 0x00, 0xfa, 0xfe, 'h', 'e', 'l', 'l', 'o'};
  EXPECT_EQ(OursZlib(stored, 5, &out), DecodeError::kCorrupt);
}

}  // namespace
}  // namespace zarrd::decode
