#include "common/util/strided_copy.h"

#include <gtest/gtest.h>

namespace zarrd {
namespace {

TEST(StridedCopy, ReversedAndSteppedRows) {
  // src is a 3x4 uint16 array; copy rows 2,0 (step -2) and columns 3,1 (step -2).
  std::vector<uint16_t> src(12);
  for (int i = 0; i < 12; ++i) src[i] = static_cast<uint16_t>(i);
  std::vector<uint16_t> dst(4, 0);
  int64_t src_strides[] = {-2 * 8, -2 * 2};
  int64_t dst_strides[] = {4, 2};
  int64_t counts[] = {2, 2};
  StridedCopy(reinterpret_cast<uint8_t*>(src.data()) + (2 * 4 + 3) * 2, src_strides,
              reinterpret_cast<uint8_t*>(dst.data()), dst_strides, counts, 2, 2);
  // numpy: np.arange(12).reshape(3,4)[2::-2, 3::-2] -> [[11, 9], [3, 1]]
  EXPECT_EQ(dst, (std::vector<uint16_t>{11, 9, 3, 1}));
}

TEST(StridedCopy, MergesContiguousDimensions) {
  std::vector<uint32_t> src(2 * 3 * 4), dst(2 * 3 * 4, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(i * 3);
  int64_t strides[] = {48, 16, 4};
  int64_t counts[] = {2, 3, 4};
  StridedCopy(reinterpret_cast<uint8_t*>(src.data()), strides,
              reinterpret_cast<uint8_t*>(dst.data()), strides, counts, 3, 4);
  EXPECT_EQ(dst, src);
}

TEST(StridedFill, FillsOnlyTheBlock) {
  std::vector<float> dst(12, 0.f);
  float value = 2.5f;
  int64_t strides[] = {16, 4};
  int64_t counts[] = {2, 3};
  StridedFill(reinterpret_cast<uint8_t*>(dst.data() + 5), strides, counts, 2,
              reinterpret_cast<uint8_t*>(&value), 4);
  std::vector<float> expected = {0, 0, 0, 0, 0, 2.5, 2.5, 2.5, 0, 2.5, 2.5, 2.5};
  EXPECT_EQ(dst, expected);
}

TEST(AllEqual, UniformAndMixedBytes) {
  std::vector<uint8_t> zeros(1001, 0);
  uint8_t z = 0;
  EXPECT_TRUE(AllEqual(zeros.data(), zeros.size(), &z, 1));
  zeros[1000] = 1;
  EXPECT_FALSE(AllEqual(zeros.data(), zeros.size(), &z, 1));
  std::vector<float> ones(33, 1.0f);
  float one = 1.0f;
  EXPECT_TRUE(
      AllEqual(reinterpret_cast<uint8_t*>(ones.data()), 33, reinterpret_cast<uint8_t*>(&one), 4));
  ones[17] = 1.5f;
  EXPECT_FALSE(
      AllEqual(reinterpret_cast<uint8_t*>(ones.data()), 33, reinterpret_cast<uint8_t*>(&one), 4));
}

}  // namespace
}  // namespace zarrd

namespace zarrd {
namespace {

TEST(StridedCopy, LargeRowCopiesUseStreamingStoresAndStayExact) {
  // 600 rows of 2050 bytes from a 3000-byte-pitch source into an odd offset: big enough for
  // the non-temporal path, with unaligned heads and tails.
  const int64_t rows = 600, run = 2050, src_pitch = 3000, dst_pitch = 2100;
  std::vector<uint8_t> src(rows * src_pitch), dst(rows * dst_pitch + 7, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 31 + 7);
  int64_t ss[] = {src_pitch, 1}, ds[] = {dst_pitch, 1}, counts[] = {rows, run};
  StridedCopy(src.data() + 3, ss, dst.data() + 7, ds, counts, 2, 1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < dst_pitch; ++c) {
      uint8_t want = c < run ? src[3 + r * src_pitch + c] : 0;
      if (r * dst_pitch + c + 7 < static_cast<int64_t>(dst.size()) && c < run) {
        ASSERT_EQ(dst[7 + r * dst_pitch + c], want) << r << "," << c;
      }
    }
  }
  EXPECT_EQ(dst[0], 0);
  EXPECT_EQ(dst[7 + run], 0);
}

}  // namespace
}  // namespace zarrd
