// The zstd decoder on the host against libzstd: the numcodecs vectors, every zstd chunk of the
// peer fixtures, and generated data over kinds, sizes, levels and frame options. The generated
// corpus is also read header by header to assert that it exercises every block, literal and
// FSE table encoding, so that the tests fail if libzstd stops producing one of them.
#include "common/decode/zstd_decode.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/decode/zstd_test_util.h"
#include "common/testing/test_util.h"

namespace zarrd::decode {
namespace {

using namespace testing;

// Decodes `frames` with libzstd and with ours (into exactly libzstd's size) and compares.
void ExpectSameAsLibzstd(const Buffer& frames, size_t capacity, const std::string& what,
                         ZstdCore core) {
  Buffer expected, ours;
  ASSERT_TRUE(LibDecompress(frames.data(), frames.size(), capacity, &expected)) << what;
  const DecodeError e = OurDecompress(frames.data(), frames.size(), expected.size(), &ours, core);
  ASSERT_EQ(e, DecodeError::kOk) << what << ": " << DecodeErrorName(e);
  ASSERT_TRUE(ours == expected) << what << ": decoded bytes differ from libzstd's";
}

class ZstdDecode : public ::testing::TestWithParam<ZstdCore> {};

TEST_P(ZstdDecode, NumcodecsVectors) {
  const std::filesystem::path root =
      std::filesystem::path(zarrd::testing::FixturesDir()) / "numcodecs" / "zstd";
  int n = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".dat") continue;
    Bytes frames;
    ASSERT_TRUE(zarrd::testing::ReadFile(entry.path().string(), &frames));
    ExpectSameAsLibzstd(frames, 64 << 20, entry.path().string(), GetParam());
    ++n;
  }
  EXPECT_GE(n, 50);
}

TEST_P(ZstdDecode, FixtureChunks) {
  int n = 0;
  for (const char* peer : {"zarrs", "zarrita"}) {
    const std::filesystem::path root = std::filesystem::path(zarrd::testing::FixturesDir()) / peer;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      Bytes chunk;
      ASSERT_TRUE(zarrd::testing::ReadFile(entry.path().string(), &chunk));
      if (chunk.size() < 4 || zstd::ReadLE32(chunk.data()) != zstd::kMagic) continue;
      ExpectSameAsLibzstd(chunk, 64 << 20, entry.path().string(), GetParam());
      ++n;
    }
  }
  EXPECT_GE(n, 40);
}

struct Case {
  DataKind kind;
  size_t size;
  CompressOptions options;
  std::string Name() const {
    return std::string(DataKindName(kind)) + " size " + std::to_string(size) + " level " +
           std::to_string(options.level) + (options.checksum ? " checksum" : "") +
           (options.content_size ? "" : " no-content-size") + (options.long_distance ? " ldm" : "");
  }
};

std::vector<Case> GeneratedCases() {
  std::vector<Case> cases;
  const size_t sizes[] = {0, 1, 7, 300, 5000, 70000, 300000, 1 << 20};
  for (DataKind kind : kAllKinds) {
    for (size_t size : sizes) {
      for (int level : {-5, 1, 3, 9, 19, 22}) {
        if (level >= 19 && size > 300000) continue;  // keeps the test quick
        for (int flags = 0; flags < 4; ++flags) {
          if (size >= 300000 && flags != 0 && flags != 3) continue;
          CompressOptions o;
          o.level = level;
          o.checksum = flags & 1;
          o.content_size = !(flags & 2);
          cases.push_back({kind, size, o});
        }
      }
    }
  }
  return cases;
}

TEST_P(ZstdDecode, GeneratedDataAndCoverage) {
  FrameFeatures seen;
  uint32_t seed = 1;
  for (const Case& c : GeneratedCases()) {
    const Buffer data = MakeData(c.kind, c.size, seed++);
    const Buffer frame = LibCompress(data, c.options);
    ASSERT_FALSE(frame.empty()) << c.Name();
    FrameFeatures f;
    ASSERT_TRUE(InspectFrames(frame.data(), frame.size(), &f)) << c.Name();
    seen.Add(f);
    Buffer ours;
    const DecodeError e = OurDecompress(frame.data(), frame.size(), data.size(), &ours, GetParam());
    ASSERT_EQ(e, DecodeError::kOk) << c.Name() << ": " << DecodeErrorName(e);
    ASSERT_TRUE(ours == data) << c.Name();
  }
  SCOPED_TRACE(seen.ToString());
  EXPECT_GT(seen.checksums, 0);
  EXPECT_GT(seen.content_sizes, 0);
  EXPECT_LT(seen.content_sizes, seen.frames);
  EXPECT_GT(seen.raw_blocks, 0);
  EXPECT_GT(seen.rle_blocks, 0);
  EXPECT_GT(seen.compressed_blocks, 0);
  EXPECT_GT(seen.raw_literals, 0);
  EXPECT_GT(seen.rle_literals, 0);
  EXPECT_GT(seen.huffman_1_stream, 0);
  EXPECT_GT(seen.huffman_4_streams, 0);
  EXPECT_GT(seen.treeless_literals, 0);
  EXPECT_GT(seen.no_sequences, 0);
  for (int mode = 0; mode < 4; ++mode) EXPECT_GT(seen.fse_mode[mode], 0) << "FSE mode " << mode;
  std::printf("generated corpus: %s\n", seen.ToString().c_str());
}

// Long-distance matching with a 128 MiB window: matches reach back megabytes, across blocks.
TEST_P(ZstdDecode, LongDistanceMatchesAndBigWindow) {
  Buffer part = MakeData(DataKind::kRandomBytes, 3 << 20, 7);
  Buffer data;
  for (int i = 0; i < 4; ++i) {
    part[size_t(i) * 1000] ^= 0x5A;
    data.insert(data.end(), part.begin(), part.end());
  }
  for (bool checksum : {false, true}) {
    CompressOptions o;
    o.level = 3;
    o.long_distance = true;
    o.window_log = 27;
    o.checksum = checksum;
    const Buffer frame = LibCompress(data, o);
    ASSERT_LT(frame.size(), data.size() / 2) << "the matches were not found";
    Buffer ours;
    ASSERT_EQ(OurDecompress(frame.data(), frame.size(), data.size(), &ours, GetParam()),
              DecodeError::kOk);
    EXPECT_TRUE(ours == data);
  }
}

TEST_P(ZstdDecode, ConcatenatedAndSkippableFrames) {
  Buffer all, expected;
  const Buffer skip = SkippableFrame(3, MakeData(DataKind::kText, 100, 1));
  all.insert(all.end(), skip.begin(), skip.end());
  int i = 0;
  for (DataKind kind : kAllKinds) {
    const Buffer data = MakeData(kind, 20000 + 1000 * i, 40 + i);
    CompressOptions o;
    o.level = 1 + 3 * i;
    o.checksum = i % 2;
    o.content_size = i % 3 != 0;
    const Buffer frame = LibCompress(data, o);
    all.insert(all.end(), frame.begin(), frame.end());
    expected.insert(expected.end(), data.begin(), data.end());
    if (i % 3 == 1) {
      const Buffer s = SkippableFrame(i, {});
      all.insert(all.end(), s.begin(), s.end());
    }
    ++i;
  }
  FrameFeatures f;
  ASSERT_TRUE(InspectFrames(all.data(), all.size(), &f));
  ASSERT_EQ(f.frames, int(std::size(kAllKinds)));
  ASSERT_GE(f.skippable, 3);
  ExpectSameAsLibzstd(all, expected.size() + 1, "concatenated frames", GetParam());
  Buffer ours;
  ASSERT_EQ(OurDecompress(all.data(), all.size(), expected.size(), &ours, GetParam()),
            DecodeError::kOk);
  EXPECT_TRUE(ours == expected);
}

TEST_P(ZstdDecode, EmptyInputAndOnlySkippableFrames) {
  Buffer ours;
  EXPECT_EQ(OurDecompress(nullptr, 0, 0, &ours, GetParam()), DecodeError::kOk);
  const Buffer skip = SkippableFrame(0, {1, 2, 3});
  EXPECT_EQ(OurDecompress(skip.data(), skip.size(), 0, &ours, GetParam()), DecodeError::kOk);
  Buffer lib;
  ASSERT_TRUE(LibDecompress(skip.data(), skip.size(), 16, &lib));
  EXPECT_EQ(lib.size(), 0u);
}

// A block written by hand: raw literals "ab", one sequence with all three tables in RLE mode
// (literal length 2, match length 3) and the offset given in its bit stream.
Buffer HandFrame(uint8_t offset_code, uint8_t offset_bits_byte) {
  return {0x28,
          0xB5,
          0x2F,
          0xFD,
          0x00,
          0x00,  // no content size, 1 KiB window
          0x4D,
          0x00,
          0x00,  // last compressed block of 9 bytes
          0x10,
          'a',
          'b',  // raw literals, 2 bytes
          0x01,
          0x54,  // one sequence, RLE tables
          0x02,
          offset_code,
          0x00,  // LL code 2, OF code, ML code 0 (3)
          offset_bits_byte};
}

TEST_P(ZstdDecode, HandWrittenOverlappingMatch) {
  // Offset code 2 with extra bits 01: offset value 5, offset 2, so "ab" + "aba".
  const Buffer frame = HandFrame(2, 0x05);
  ExpectSameAsLibzstd(frame, 5, "hand-written frame", GetParam());
  Buffer ours;
  ASSERT_EQ(OurDecompress(frame.data(), frame.size(), 5, &ours, GetParam()), DecodeError::kOk);
  EXPECT_EQ(std::string(ours.begin(), ours.end()), "ababa");
}

TEST_P(ZstdDecode, HandWrittenOffsetBeforeStartIsCorrupt) {
  // Offset code 3 with extra bits 000: offset value 8, offset 5, but only 2 bytes precede it.
  const Buffer frame = HandFrame(3, 0x08);
  Buffer lib, ours;
  EXPECT_FALSE(LibDecompress(frame.data(), frame.size(), 5, &lib));
  EXPECT_EQ(OurDecompress(frame.data(), frame.size(), 5, &ours, GetParam()), DecodeError::kCorrupt);
}

INSTANTIATE_TEST_SUITE_P(Cores, ZstdDecode, ::testing::Values(ZstdCore::kFrames, ZstdCore::kBlocks),
                         [](const auto& info) { return ZstdCoreName(info.param); });

}  // namespace
}  // namespace zarrd::decode
