#include "common/dtype/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/dtype/fill_value.h"
#include "common/dtype/string_arena.h"

namespace zarrd {
namespace {

using nlohmann::json;

TEST(DataType, V2TypestrsParseWithByteOrder) {
  auto f8 = ParseV2DataType("<f8");
  ASSERT_TRUE(f8.ok());
  EXPECT_EQ(f8->dtype, DataType::kFloat64);
  EXPECT_EQ(f8->endian, Endian::kLittle);
  auto i4 = ParseV2DataType(">i4");
  EXPECT_EQ(i4->dtype, DataType::kInt32);
  EXPECT_EQ(i4->endian, Endian::kBig);
  EXPECT_EQ(ParseV2DataType("|b1")->dtype, DataType::kBool);
  EXPECT_EQ(ParseV2DataType("<c16")->dtype, DataType::kComplex128);
  EXPECT_EQ(ParseV2DataType("<f2")->dtype, DataType::kFloat16);
  EXPECT_FALSE(ParseV2DataType("|U7").ok());  // strings: string_arena_test.cc
  EXPECT_FALSE(ParseV2DataType("<S3").ok());
  EXPECT_EQ(V2Typestr(DataType::kUint8, Endian::kBig), "|u1");
  EXPECT_EQ(V2Typestr(DataType::kInt16, Endian::kBig), ">i2");
}

TEST(DataType, DatetimeAndTimedeltaTypestrsKeepTheirUnit) {
  // Every unit numpy has (np.dtype("<M8[as]"), ...), with and without a multiplier.
  for (const char* unit :
       {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "10ms", "25s"}) {
    for (const char* prefix : {"<M8[", ">m8["}) {
      const std::string typestr = std::string(prefix) + unit + "]";
      auto parsed = ParseV2DataType(typestr);
      ASSERT_TRUE(parsed.ok()) << typestr << ": " << parsed.status().ToString();
      EXPECT_EQ(parsed->dtype, prefix[1] == 'M' ? DataType::kDatetime64 : DataType::kTimedelta64);
      EXPECT_EQ(parsed->endian, prefix[0] == '<' ? Endian::kLittle : Endian::kBig);
      EXPECT_EQ(V2Typestr(parsed->dtype, parsed->endian, parsed->time_unit), typestr);
      EXPECT_EQ(ItemSize(parsed->dtype), 8u);
    }
  }
  EXPECT_EQ(ParseV2DataType("<M8[10ms]")->time_unit, (TimeUnit{"ms", 10}));
  for (const char* bad : {"<M8", "<M8[]", "<M8[x]", "<m8[0s]", "<f8[s]", "<M4[s]", "<M8[s"}) {
    EXPECT_EQ(ParseV2DataType(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(DataType, V3NamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(DataType::kTimedelta64); ++i) {
    auto dtype = static_cast<DataType>(i);
    auto parsed = ParseV3DataType(V3Name(dtype));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, dtype);
  }
  auto bad = ParseV3DataType("str");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("\"str\""), std::string::npos);
}

TEST(DataType, HalfConversionsMatchIeee) {
  // Bit patterns from numpy: np.float16(x).view(np.uint16)
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.5f), 0xc100);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(FloatToHalf(5.96e-8f), 0x0001);
  EXPECT_EQ(FloatToHalf(0.1f), 0x2e66);
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
}

template <typename T>
T As(const FillValue& v) {
  T out;
  std::memcpy(&out, v.data(), sizeof(T));
  return out;
}

TEST(FillValue, V3SpecialFloatsHexAndComplex) {
  auto nan = ParseFillValue("NaN", DataType::kFloat32, ZarrFormat::kV3);
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan(As<float>(*nan)));
  EXPECT_EQ(As<double>(*ParseFillValue("-Infinity", DataType::kFloat64, ZarrFormat::kV3)),
            -INFINITY);
  auto hex = ParseFillValue("0x7fc00001", DataType::kFloat32, ZarrFormat::kV3);
  ASSERT_TRUE(hex.ok());
  EXPECT_EQ(As<uint32_t>(*hex), 0x7fc00001u);
  EXPECT_EQ(FillValueToJson(*hex, DataType::kFloat32, ZarrFormat::kV3), "0x7fc00001");
  auto c = ParseFillValue(json::parse(R"([1.5, "NaN"])"), DataType::kComplex64, ZarrFormat::kV3);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(As<float>(*c), 1.5f);
  EXPECT_EQ(FillValueToJson(*c, DataType::kComplex64, ZarrFormat::kV3),
            json::parse(R"([1.5,"NaN"])"));
  EXPECT_EQ(As<uint16_t>(*ParseFillValue(1.0, DataType::kFloat16, ZarrFormat::kV3)), 0x3c00);
}

TEST(FillValue, IntegerRangesAndTypesAreChecked) {
  EXPECT_EQ(As<int8_t>(*ParseFillValue(-128, DataType::kInt8, ZarrFormat::kV3)), -128);
  EXPECT_FALSE(ParseFillValue(128, DataType::kInt8, ZarrFormat::kV3).ok());
  EXPECT_FALSE(ParseFillValue(-1, DataType::kUint32, ZarrFormat::kV3).ok());
  EXPECT_EQ(As<uint64_t>(
                *ParseFillValue(json(18446744073709551615ull), DataType::kUint64, ZarrFormat::kV3)),
            18446744073709551615ull);
  EXPECT_FALSE(ParseFillValue("zero", DataType::kInt32, ZarrFormat::kV3).ok());
  EXPECT_FALSE(ParseFillValue(1e300, DataType::kFloat32, ZarrFormat::kV3).ok());
  EXPECT_FALSE(ParseFillValue(nullptr, DataType::kInt32, ZarrFormat::kV3).ok());
  auto status = ParseFillValue(1.5, DataType::kInt16, ZarrFormat::kV3).status();
  EXPECT_NE(status.message().find("fill_value"), std::string::npos);
  EXPECT_EQ(*ParseFillValue(nullptr, DataType::kFloat64, ZarrFormat::kV2), FillValue(8, 0));
  EXPECT_EQ(*ParseFillValue(true, DataType::kBool, ZarrFormat::kV3), FillValue{1});
}

TEST(FillValue, NaTIsTheSmallestInt64) {
  // numpy: np.array("NaT", "M8[ns]").view("i8") == -9223372036854775808, as zarr writes it.
  for (DataType dtype : {DataType::kDatetime64, DataType::kTimedelta64}) {
    for (ZarrFormat format : {ZarrFormat::kV2, ZarrFormat::kV3}) {
      auto nat = ParseFillValue("NaT", dtype, format);
      ASSERT_TRUE(nat.ok());
      EXPECT_EQ(As<int64_t>(*nat), std::numeric_limits<int64_t>::min());
      EXPECT_EQ(*ParseFillValue(json(std::numeric_limits<int64_t>::min()), dtype, format), *nat);
      EXPECT_EQ(FillValueToJson(*nat, dtype, format), json(std::numeric_limits<int64_t>::min()));
      EXPECT_EQ(As<int64_t>(*ParseFillValue(86400, dtype, format)), 86400);
      EXPECT_FALSE(ParseFillValue("2020-01-01", dtype, format).ok());
    }
  }
}

// Chunks of the fill value are left unstored: strings compare by text, whatever their handles.
TEST(FillValue, AllFillComparesStringsByTextAndNumbersByBytes) {
  const FillValue dash = StringFillValue("-");
  const std::string a = "-", b = "-", c = "x";
  uint8_t handles[3 * kStringHandleSize];
  StoreStringHandle(handles, &a);
  StoreStringHandle(handles + kStringHandleSize, &b);
  StoreStringHandle(handles + 2 * kStringHandleSize, &c);
  EXPECT_TRUE(AllFill(handles, 2, dash, DataType::kString));
  EXPECT_FALSE(AllFill(handles, 3, dash, DataType::kString));
  const std::string empty;
  uint8_t nulls[2 * kStringHandleSize] = {};
  StoreStringHandle(nulls, &empty);
  EXPECT_TRUE(AllFill(nulls, 2, ZeroFillValue(DataType::kString), DataType::kString));
  EXPECT_FALSE(AllFill(nulls, 2, dash, DataType::kString));
  const int32_t ints[] = {7, 7, 8};
  const FillValue seven = *ParseFillValue(7, DataType::kInt32, ZarrFormat::kV3);
  EXPECT_TRUE(AllFill(reinterpret_cast<const uint8_t*>(ints), 2, seven, DataType::kInt32));
  EXPECT_FALSE(AllFill(reinterpret_cast<const uint8_t*>(ints), 3, seven, DataType::kInt32));
}

}  // namespace
}  // namespace zarrd
