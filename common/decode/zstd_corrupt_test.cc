// The zstd decoder on damaged input: bit flips, truncation, wrong checksums, a destination of the
// wrong size and invalid headers give errors (never a crash: run under ASan), and whatever both
// libzstd and ours accept decodes to the same bytes. libzstd also accepts some flipped frames that
// we reject: its fast Huffman path does not check that each stream is consumed exactly, which
// RFC 8878 requires, so a flip inside a literal stream can pass there as different literals.
#include <gtest/gtest.h>

#include <random>

#include "common/decode/zstd_decode.h"
#include "common/decode/zstd_test_util.h"

namespace zarrd::decode {
namespace {

using namespace testing;

std::vector<std::pair<Buffer, Buffer>> Samples() {
  std::vector<std::pair<Buffer, Buffer>> out;  // (data, frame)
  uint32_t seed = 100;
  for (DataKind kind : {DataKind::kText, DataKind::kMixed, DataKind::kSortedInts,
                        DataKind::kSmoothFloats, DataKind::kPeriodic}) {
    for (int level : {1, 3, 19}) {
      for (bool checksum : {false, true}) {
        CompressOptions o;
        o.level = level;
        o.checksum = checksum;
        Buffer data = MakeData(kind, 40000 + seed * 100, seed);
        ++seed;
        Buffer frame = LibCompress(data, o);
        out.emplace_back(std::move(data), std::move(frame));
      }
    }
  }
  return out;
}

class ZstdCorrupt : public ::testing::TestWithParam<ZstdCore> {};

TEST_P(ZstdCorrupt, BitFlipsGiveErrorsOrLibzstdsBytes) {
  std::mt19937 rng(5);
  int ours_accepted = 0, both_accepted = 0, only_libzstd = 0, runs = 0;
  for (const auto& [data, frame] : Samples()) {
    for (int i = 0; i < 150; ++i, ++runs) {
      Buffer bad = frame;
      const int flips = 1 + int(rng() % 3);
      for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] ^= uint8_t(1u << (rng() % 8));
      Buffer lib, ours;
      const bool lib_ok = LibDecompress(bad.data(), bad.size(), data.size() * 2 + 1024, &lib);
      const size_t size = lib_ok ? lib.size() : data.size();
      const DecodeError e = OurDecompress(bad.data(), bad.size(), size, &ours, GetParam());
      if (e == DecodeError::kOk) ++ours_accepted;
      if (lib_ok && e == DecodeError::kOk) {
        ++both_accepted;
        ASSERT_TRUE(ours == lib) << "flip run " << runs;
      }
      if (lib_ok && e != DecodeError::kOk) {
        ++only_libzstd;
      }
    }
  }
  std::printf("%d runs: ours accepted %d, both %d, only libzstd %d\n", runs, ours_accepted,
              both_accepted, only_libzstd);
  EXPECT_LT(ours_accepted, runs / 2);  // the flips do damage most frames
}

TEST_P(ZstdCorrupt, EveryTruncationIsAnError) {
  for (const auto& [data, frame] : Samples()) {
    const size_t step = frame.size() > 4000 ? frame.size() / 997 : 1;
    for (size_t n = 0; n < frame.size(); n += step) {
      Buffer ours;
      EXPECT_NE(OurDecompress(frame.data(), n, data.size(), &ours, GetParam()), DecodeError::kOk)
          << "prefix " << n << " of " << frame.size();
    }
  }
}

TEST_P(ZstdCorrupt, WrongChecksum) {
  CompressOptions o;
  o.checksum = true;
  const Buffer data = MakeData(DataKind::kText, 10000, 3);
  Buffer frame = LibCompress(data, o);
  Buffer ours, lib;
  ASSERT_EQ(OurDecompress(frame.data(), frame.size(), data.size(), &ours, GetParam()),
            DecodeError::kOk);
  frame[frame.size() - 2] ^= 0x10;
  EXPECT_FALSE(LibDecompress(frame.data(), frame.size(), data.size(), &lib));
  EXPECT_EQ(OurDecompress(frame.data(), frame.size(), data.size(), &ours, GetParam()),
            DecodeError::kChecksum);
}

TEST_P(ZstdCorrupt, DestinationOfTheWrongSize) {
  for (DataKind kind : {DataKind::kZeros, DataKind::kText, DataKind::kRandomBytes}) {
    for (bool content_size : {false, true}) {
      CompressOptions o;
      o.content_size = content_size;
      const Buffer data = MakeData(kind, 300000, 9);
      const Buffer frame = LibCompress(data, o);
      Buffer ours;
      EXPECT_EQ(OurDecompress(frame.data(), frame.size(), data.size() - 1, &ours, GetParam()),
                DecodeError::kOutputOverrun);
      EXPECT_EQ(OurDecompress(frame.data(), frame.size(), data.size() / 3, &ours, GetParam()),
                DecodeError::kOutputOverrun);
      EXPECT_EQ(OurDecompress(frame.data(), frame.size(), data.size() + 1, &ours, GetParam()),
                DecodeError::kOutputShort);
    }
  }
}

TEST_P(ZstdCorrupt, InvalidHeaders) {
  const Buffer raw = {0x28, 0xB5, 0x2F, 0xFD, 0x20, 3, 0x19, 0, 0, 'x', 'y', 'z'};
  Buffer ours, lib;
  ASSERT_TRUE(LibDecompress(raw.data(), raw.size(), 3, &lib));
  ASSERT_EQ(OurDecompress(raw.data(), raw.size(), 3, &ours, GetParam()), DecodeError::kOk);
  EXPECT_TRUE(ours == lib);

  Buffer bad_magic = raw;
  bad_magic[0] = 0x29;
  EXPECT_EQ(OurDecompress(bad_magic.data(), bad_magic.size(), 3, &ours, GetParam()),
            DecodeError::kCorrupt);
  Buffer reserved_bit = raw;
  reserved_bit[4] |= 0x08;
  EXPECT_EQ(OurDecompress(reserved_bit.data(), reserved_bit.size(), 3, &ours, GetParam()),
            DecodeError::kCorrupt);
  Buffer reserved_block = raw;
  reserved_block[6] = 0x1F;  // block type 3
  EXPECT_EQ(OurDecompress(reserved_block.data(), reserved_block.size(), 3, &ours, GetParam()),
            DecodeError::kCorrupt);
  Buffer trailing = raw;
  trailing.push_back(0);
  EXPECT_EQ(OurDecompress(trailing.data(), trailing.size(), 3, &ours, GetParam()),
            DecodeError::kTruncated);
  const Buffer dictionary = {0x28, 0xB5, 0x2F, 0xFD, 0x21, 5, 3, 0x19, 0, 0, 'x', 'y', 'z'};
  EXPECT_FALSE(LibDecompress(dictionary.data(), dictionary.size(), 3, &lib));
  EXPECT_EQ(OurDecompress(dictionary.data(), dictionary.size(), 3, &ours, GetParam()),
            DecodeError::kUnsupported);
  Buffer wrong_content_size = raw;
  wrong_content_size[5] = 4;
  EXPECT_FALSE(LibDecompress(wrong_content_size.data(), wrong_content_size.size(), 4, &lib));
  EXPECT_EQ(
      OurDecompress(wrong_content_size.data(), wrong_content_size.size(), 3, &ours, GetParam()),
      DecodeError::kCorrupt);
}

INSTANTIATE_TEST_SUITE_P(Cores, ZstdCorrupt,
                         ::testing::Values(ZstdCore::kFrames, ZstdCore::kBlocks),
                         [](const auto& info) { return ZstdCoreName(info.param); });

}  // namespace
}  // namespace zarrd::decode
