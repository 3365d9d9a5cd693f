// numpy's value-based result types and casts, against numpy 1.24 itself:
//   (np.ones(1, T) * v).dtype   and   np.array([v], F).astype(T)
#include "common/codec/numpy_scalar.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zarrd {
namespace {

using nlohmann::json;

TEST(NumpyScalar, ScalarOpTypeAsNumpy) {
  using D = DataType;
  struct Case {
    D array;
    json scalar;
    D result;
  };
  const Case cases[] = {
      {D::kInt8, 1, D::kInt8},
      {D::kInt8, 200, D::kInt16},
      {D::kInt8, 40000, D::kInt32},
      {D::kInt8, -40000, D::kInt32},
      {D::kInt16, 1000, D::kInt16},
      {D::kInt32, 3000000000LL, D::kInt64},
      {D::kInt8, 1ULL << 63, D::kFloat64},
      {D::kUint8, -1, D::kInt16},
      {D::kUint8, 1000, D::kUint16},
      {D::kUint16, -1, D::kInt32},
      {D::kUint32, -200, D::kInt64},
      {D::kUint64, -1, D::kFloat64},
      {D::kUint8, 100000, D::kUint32},
      {D::kUint8, 1.5, D::kFloat64},
      {D::kInt64, 1.5, D::kFloat64},
      {D::kFloat16, 200, D::kFloat16},
      {D::kFloat16, 1000, D::kFloat32},
      {D::kFloat16, 100000, D::kFloat64},
      {D::kFloat16, -200, D::kFloat32},
      {D::kFloat16, 1.5, D::kFloat16},
      {D::kFloat16, 131072.0, D::kFloat32},
      {D::kFloat16, 1e39, D::kFloat64},
      {D::kFloat32, 1000, D::kFloat32},
      {D::kFloat32, 100000, D::kFloat64},
      {D::kFloat32, -40000, D::kFloat64},
      {D::kFloat32, 131072.0, D::kFloat32},
      {D::kFloat32, 1e39, D::kFloat64},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ScalarOpType(c.array, PythonScalar(c.scalar)), c.result)
        << V3Name(c.array) << " * " << c.scalar.dump();
  }
}

TEST(NumpyScalar, CastsAsNumpyOnX86) {
  auto cast = [](double v, DataType to) {
    uint8_t out[8] = {};
    StoreScalar(CastScalar(NumpyScalar{DataType::kFloat64, 0, v}, to), out);
    uint64_t bits = 0;
    std::memcpy(&bits, out, ItemSize(to));
    return bits;
  };
  // np.array([-7500.7, nan, 3e9, -1.5]).astype(T).view(uint T)
  EXPECT_EQ(cast(-7500.7, DataType::kUint16), 58036u);
  EXPECT_EQ(cast(NAN, DataType::kInt32), 0x80000000u);
  EXPECT_EQ(cast(NAN, DataType::kInt16), 0u);
  EXPECT_EQ(cast(3e9, DataType::kInt32), 0x80000000u);
  EXPECT_EQ(cast(-1.5, DataType::kInt8), 0xffu);
  EXPECT_EQ(cast(NAN, DataType::kInt64), 0x8000000000000000u);
  EXPECT_EQ(cast(1e19, DataType::kUint64), 10000000000000000000u);
}

}  // namespace
}  // namespace zarrd
