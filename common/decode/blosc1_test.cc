// The blosc 1 container decoder against libblosc: generated data over every typesize class,
// cname, clevel, shuffle and block size; numcodecs' vectors; every blosc chunk of the peer
// fixtures; and corrupt or truncated containers.
#include "common/decode/blosc1.h"

#include <blosc.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "common/decode/decode_test_util.h"
#include "common/decode/zstd_decode.h"
#include "common/testing/test_util.h"

namespace zarrd::decode {
namespace {

using testing::Buffer;

DecodeError Ours(const Buffer& c, size_t size, Buffer* out) {
  out->assign(size, 0xcd);
  Buffer scratch(size);
  uint64_t written = 0;
  const DecodeError e = DecodeBlosc1(c.data(), c.size(), out->data(), size, scratch.data(),
                                     &written, testing::LibZstd());
  if (e == DecodeError::kOk) {
    EXPECT_EQ(written, size);
  }
  return e;
}

struct Counts {
  int cases = 0, memcpyed = 0, split = 0, shuffled = 0, bitshuffled = 0, leftover = 0;
};

void Check(const Buffer& data, const char* cname, int clevel, int shuffle, int ts, size_t blocksize,
           Counts* counts) {
  SCOPED_TRACE(::testing::Message()
               << cname << " clevel " << clevel << " shuffle " << shuffle << " typesize " << ts
               << " blocksize " << blocksize << " size " << data.size());
  const Buffer c = testing::BloscCompress(data, cname, clevel, shuffle, ts, blocksize);
  ASSERT_FALSE(c.empty());
  Buffer expected, out;
  ASSERT_TRUE(testing::LibBloscDecode(c, &expected));
  ASSERT_EQ(expected, data);
  ASSERT_EQ(Ours(c, data.size(), &out), DecodeError::kOk);
  ASSERT_EQ(out, expected);
  Blosc1Header h;
  ASSERT_EQ(ParseBlosc1(c.data(), c.size(), data.size(), &h), DecodeError::kOk);
  counts->cases++;
  counts->memcpyed += h.memcpyed;
  counts->leftover += h.nblocks > 0 && h.nbytes % h.blocksize != 0;
  counts->shuffled += !h.memcpyed && (h.flags & 1) && ts > 1;
  counts->bitshuffled += !h.memcpyed && (h.flags & 4);
  counts->split += !h.memcpyed && h.typesize > 1 && !(h.flags & 0x10) && h.blocksize / ts >= 128;
}

TEST(Blosc1, GeneratedDataEveryCodecLevelShuffleAndTypesize) {
  Counts counts;
  for (const char* cname : {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}) {
    if (blosc_compname_to_compcode(cname) < 0) {
      std::cout << "[ skip ] libblosc lacks " << cname << "\n";
      continue;
    }
    for (int ts : {1, 2, 3, 4, 8, 12}) {
      for (int clevel = 0; clevel <= 9; ++clevel) {
        if (ts != 4 && clevel % 4 != 1 && clevel != 0 && clevel != 9) continue;
        for (int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
          for (size_t blocksize : {size_t{0}, size_t{256}, size_t{1} << 17}) {
            for (size_t n : {size_t{1}, size_t{77}, size_t{4096 * 3 + 5}, size_t{200003}}) {
              const int kind = (clevel + ts + shuffle) % 4;
              Check(testing::Payload(kind, n, clevel * 100 + ts), cname, clevel, shuffle, ts,
                    blocksize, &counts);
              if (::testing::Test::HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
  std::cout << counts.cases << " containers: " << counts.memcpyed << " memcpyed, " << counts.split
            << " split, " << counts.shuffled << " byte-shuffled, " << counts.bitshuffled
            << " bit-shuffled, " << counts.leftover << " with a short block\n";
  EXPECT_GT(counts.memcpyed, 0);
  EXPECT_GT(counts.split, 0);
  EXPECT_GT(counts.shuffled, 0);
  EXPECT_GT(counts.bitshuffled, 0);
  EXPECT_GT(counts.leftover, 0);
}

TEST(Blosc1, EmptyAndTinyBuffers) {
  for (const char* cname : {"blosclz", "lz4", "zstd"}) {
    const Buffer c = testing::BloscCompress({}, cname, 5, BLOSC_SHUFFLE, 4, 0);
    ASSERT_EQ(c.size(), 16u);
    Buffer out;
    EXPECT_EQ(Ours(c, 0, &out), DecodeError::kOk);
    EXPECT_EQ(Ours(c, 4, &out), DecodeError::kOutputShort);
    // An empty container of another format: libblosc's validation has no sizes for it.
    for (uint8_t version : {0, 1, 3}) {
      Buffer other = c;
      other[0] = version;
      size_t lib_nbytes = 0;
      EXPECT_NE(blosc_cbuffer_validate(other.data(), other.size(), &lib_nbytes), 0);
      EXPECT_EQ(Ours(other, 0, &out), DecodeError::kCorrupt);
    }
  }
  Counts counts;
  for (size_t n = 1; n < 40; ++n) Check(testing::Payload(1, n, 1), "lz4", 9, 1, 4, 0, &counts);
}

TEST(Blosc1, ZstdBlocksNeedTheZstdSeam) {
  const Buffer data = testing::Payload(0, 100000, 3);
  const Buffer c = testing::BloscCompress(data, "zstd", 5, BLOSC_SHUFFLE, 4, 0);
  Buffer out(data.size()), scratch(data.size());
  uint64_t written = 0;
  EXPECT_EQ(DecodeBlosc1(c.data(), c.size(), out.data(), out.size(), scratch.data(), &written),
            DecodeError::kUnsupported);
}

// The seam the GPU kernel fills: zstd_decode.h's frame decoder (here its host build) on blosc's
// zstd splits, against libblosc, over shuffles, typesizes, levels and block sizes.
TEST(Blosc1, ZstdSplitsThroughOurZstdDecoder) {
  auto ws = std::make_unique<ZstdWorkspace>();
  auto ours = [&](const uint8_t* src, uint64_t src_size, uint8_t* dst, uint64_t dst_size,
                  uint64_t* written) {
    return DecodeZstd(src, src_size, dst, dst_size, written, ws.get());
  };
  int cases = 0;
  for (int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
    for (int ts : {1, 4, 8}) {
      for (int clevel : {1, 5, 9}) {
        for (size_t blocksize : {size_t{0}, size_t{4096}}) {
          const Buffer data = testing::Payload((ts + clevel) % 4, 70000 + ts, clevel);
          const Buffer c = testing::BloscCompress(data, "zstd", clevel, shuffle, ts, blocksize);
          Buffer expected, out(data.size(), 0xcd), scratch(data.size());
          ASSERT_TRUE(testing::LibBloscDecode(c, &expected));
          uint64_t written = 0;
          ASSERT_EQ(DecodeBlosc1(c.data(), c.size(), out.data(), out.size(), scratch.data(),
                                 &written, ours),
                    DecodeError::kOk)
              << "shuffle " << shuffle << " typesize " << ts << " clevel " << clevel;
          EXPECT_EQ(out, expected);
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 54);
}

TEST(Blosc1, NumcodecsVectors) {
  const auto root = std::filesystem::path(zarrd::testing::FixturesDir()) / "numcodecs" / "blosc";
  int decoded = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".dat") continue;
    SCOPED_TRACE(e.path().string());
    const Buffer c = testing::ReadBytes(e.path().string());
    Buffer expected, out;
    if (!testing::LibBloscDecode(c, &expected)) {
      // A cname that libblosc was built without: ours must not accept it either.
      EXPECT_NE(Ours(c, c.size() >= 8 ? c[4] | c[5] << 8 | c[6] << 16 : 0, &out), DecodeError::kOk);
      continue;
    }
    ASSERT_EQ(Ours(c, expected.size(), &out), DecodeError::kOk);
    EXPECT_EQ(out, expected);
    ++decoded;
  }
  std::cout << decoded << " numcodecs blosc vectors\n";
  EXPECT_GT(decoded, 100);
}

TEST(Blosc1, EveryBloscChunkOfThePeerFixtures) {
  int decoded = 0;
  for (const auto& path : testing::FixtureFiles()) {
    const Buffer c = testing::ReadBytes(path);
    if (c.size() < 16 || c[0] != 2) continue;
    const uint32_t cbytes = c[12] | c[13] << 8 | c[14] << 16 | uint32_t{c[15]} << 24;
    Buffer expected, out;
    if (cbytes != c.size() || !testing::LibBloscDecode(c, &expected)) continue;
    SCOPED_TRACE(path);
    ASSERT_EQ(Ours(c, expected.size(), &out), DecodeError::kOk);
    EXPECT_EQ(out, expected);
    ++decoded;
  }
  std::cout << decoded << " blosc chunks of the peer fixtures\n";
  EXPECT_GT(decoded, 30);
}

TEST(Blosc1, TruncatedAndCorruptContainersFailCleanly) {
  for (const char* cname : {"blosclz", "lz4", "zlib", "zstd"}) {
    for (int shuffle : {0, 1, 2}) {
      const Buffer data = testing::Payload(3, 20000, shuffle);
      const Buffer c = testing::BloscCompress(data, cname, 5, shuffle, 4, 2048);
      Buffer out;
      for (size_t cut = 0; cut < c.size(); cut += 1 + c.size() / 200) {
        EXPECT_NE(Ours(Buffer(c.begin(), c.begin() + cut), data.size(), &out), DecodeError::kOk);
      }
      for (size_t k = 0; k < c.size(); k += 1 + c.size() / 300) {
        Buffer bad = c;
        bad[k] ^= 0x41;
        Buffer expected;
        const DecodeError e = Ours(bad, data.size(), &out);
        // Where ours accepts, the library (given the valid-sized buffer) agrees byte for byte.
        if (e == DecodeError::kOk && k >= 16) {
          ASSERT_TRUE(testing::LibBloscDecode(bad, &expected)) << cname << " byte " << k;
          EXPECT_EQ(out, expected);
        }
      }
    }
  }
  Buffer out;
  Buffer c = testing::BloscCompress(testing::Payload(0, 4096, 1), "lz4", 5, 1, 4, 0);
  Buffer bad = c;
  bad[0] = 3;  // a format version from the future
  EXPECT_EQ(Ours(bad, 4096, &out), DecodeError::kCorrupt);
  bad = c;
  bad[2] |= 0x08;
  EXPECT_EQ(Ours(bad, 4096, &out), DecodeError::kCorrupt);
  EXPECT_EQ(Ours(c, 4095, &out), DecodeError::kOutputOverrun);
  EXPECT_EQ(Ours(c, 4097, &out), DecodeError::kOutputShort);
  bad = c;
  bad[12] += 1;  // cbytes past the input
  EXPECT_EQ(Ours(bad, 4096, &out), DecodeError::kTruncated);
  bad = c;
  bad.push_back(0);  // a byte after the container, which libblosc's validation refuses too
  EXPECT_EQ(Ours(bad, 4096, &out), DecodeError::kCorrupt);
}

}  // namespace
}  // namespace zarrd::decode
