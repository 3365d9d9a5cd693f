#include "common/decode/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace zarrd::decode {
namespace {

// A second formulation: the reflected polynomial division a bit at a time, no tables.
uint32_t BitwiseCrc32c(const uint8_t* p, size_t n) {
  uint32_t crc = ~0u;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

const Crc32cTables& Tables() {
  static const Crc32cTables tables = [] {
    Crc32cTables t;
    BuildCrc32cTables(&t);
    return t;
  }();
  return tables;
}

uint32_t Crc32cOf(const uint8_t* p, size_t n) { return ~Crc32cUpdate(Tables(), ~0u, p, n); }

// RFC 3720 B.4 and the common check value of "123456789".
TEST(Crc32c, PublishedVectors) {
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xff), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = uint8_t(i);
    down[i] = uint8_t(31 - i);
  }
  EXPECT_EQ(Crc32cOf(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32cOf(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(Crc32cOf(up.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(Crc32cOf(down.data(), 32), 0x113FDB5Cu);
  const std::string check = "123456789";
  EXPECT_EQ(Crc32cOf(reinterpret_cast<const uint8_t*>(check.data()), 9), 0xE3069283u);
  EXPECT_EQ(Crc32cOf(nullptr, 0), 0u);
}

// Every length and start alignment of the slicing loop against the bitwise division.
TEST(Crc32c, MatchesTheBitwiseDivision) {
  std::mt19937 rng(5);
  std::vector<uint8_t> data(600);
  for (auto& b : data) b = uint8_t(rng());
  for (size_t start = 0; start < 8; ++start) {
    for (size_t n = 0; n + start <= data.size(); n += 1 + n / 16) {
      ASSERT_EQ(Crc32cOf(data.data() + start, n), BitwiseCrc32c(data.data() + start, n))
          << "start " << start << " length " << n;
    }
  }
}

// The GPU check's split: the shares of any number of pieces XOR to the chunk's register.
TEST(Crc32c, PieceSharesCombineToTheWholeChunk) {
  std::mt19937 rng(7);
  std::vector<uint8_t> data(70000);
  for (auto& b : data) b = uint8_t(rng());
  for (size_t n : {0, 1, 7, 8, 255, 256, 257, 4093, 65536, 70000}) {
    const uint32_t want = BitwiseCrc32c(data.data(), n);
    for (uint32_t pieces : {1u, 2u, 3u, 32u, 255u, 256u, 1000u}) {
      uint32_t reg = 0;
      for (uint32_t i = 0; i < pieces; ++i)
        reg ^= Crc32cPieceShare(Tables(), data.data(), n, pieces, i);
      ASSERT_EQ(~reg, want) << n << " bytes in " << pieces << " pieces";
    }
  }
}

TEST(Crc32c, ShiftIsAppendingZeros) {
  std::vector<uint8_t> zeros(3000, 0);
  for (uint32_t reg : {0u, 1u, 0x80000000u, 0xDEADBEEFu}) {
    for (size_t n : {0, 1, 2, 5, 64, 1000, 2999}) {
      EXPECT_EQ(CrcShift<kCrc32cPolynomial>(reg, n), Crc32cUpdate(Tables(), reg, zeros.data(), n))
          << n;
    }
  }
}

}  // namespace
}  // namespace zarrd::decode
