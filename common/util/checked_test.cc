#include "common/util/checked.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace zarrd {
namespace {

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

TEST(Checked, MultiplyAndAddRefuseWhatDoesNotFit) {
  EXPECT_EQ(CheckedMul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 31), uint64_t{1} << 63);
  EXPECT_FALSE(CheckedMul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32));
  EXPECT_FALSE(CheckedMul<int64_t>(int64_t{1} << 62, 2));
  EXPECT_EQ(CheckedMul<int64_t>(int64_t{1} << 62, -2), std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(CheckedAdd<uint64_t>(kMax64, 1));
  EXPECT_EQ(CheckedAdd<uint64_t>(kMax64 - 1, 1), kMax64);
  EXPECT_EQ(SaturatingMul(uint64_t{1} << 40, uint64_t{1} << 40), kMax64);
  EXPECT_EQ(SaturatingAdd(kMax64, 5), kMax64);
  EXPECT_EQ(SaturatingMul(3, 5), 15u);
}

// The sizes the hostile requests of the hardening round asked for: float32 [2^31, 2^31] and
// [2^62] are 2^64 bytes, which wrapped to 0.
TEST(Checked, ProductOfExtentsRefusesSizesPast63Bits) {
  const std::vector<int64_t> square = {int64_t{1} << 31, int64_t{1} << 31};
  EXPECT_EQ(*CheckedProduct(square, 1, "elements"), uint64_t{1} << 62);
  auto bytes = CheckedProduct(square, 4, "array size");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bytes.status().message().find("array size overflows"), std::string::npos)
      << bytes.status().ToString();
  EXPECT_FALSE(CheckedProduct(std::vector<int64_t>{int64_t{1} << 62}, 4, "size").ok());
  EXPECT_EQ(*CheckedProduct(std::vector<int64_t>{int64_t{1} << 61}, 4, "size", kMax64),
            uint64_t{1} << 63);
  // 2^63 bytes is past the default limit, INT64_MAX.
  EXPECT_FALSE(CheckedProduct(std::vector<int64_t>{int64_t{1} << 61}, 4, "size").ok());
  // A zero extent anywhere makes the product 0, however large the others.
  EXPECT_EQ(*CheckedProduct(std::vector<int64_t>{int64_t{1} << 62, int64_t{1} << 62, 0}, 8, "s"),
            0u);
  EXPECT_EQ(CheckedProduct(std::vector<int64_t>{3, -1}, 1, "shape").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(*CheckedProduct(std::vector<int64_t>{}, 8, "scalar"), 8u);
  EXPECT_FALSE(CheckedProduct(std::vector<int64_t>{1 << 20, 1 << 20}, 1, "chunk", 1 << 30).ok());
}

}  // namespace
}  // namespace zarrd
