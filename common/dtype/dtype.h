// Zarr's core numeric data types, numpy's datetime64/timedelta64 (int64 underneath), strings,
// and the v2 (numpy typestr) and v3 names of each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/util/status.h"

namespace zarrd {

enum class DataType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
  kDatetime64,   // int64 counts of a TimeUnit since 1970-01-01; INT64_MIN is NaT
  kTimedelta64,  // int64 counts of a TimeUnit; INT64_MIN is NaT
  // Strings: the engine holds each element as an 8-byte handle (common/dtype/string_arena.h),
  // whether stored variable-length (v3 "string"/"bytes", v2 "|O") or fixed-length (v2 "<U<n>",
  // "|S<n>"; ArrayMetadata::string_width).
  kString,  // text, UTF-8 in the engine
  kBytes,   // binary
};

enum class Endian : uint8_t { kLittle, kBig };

enum class DataTypeKind : uint8_t { kBool, kSigned, kUnsigned, kFloat, kComplex, kString };

// numpy's datetime unit with its multiplier: "ns" is {"ns", 1}, "10ms" is {"ms", 10}.
struct TimeUnit {
  std::string unit;  // Y M W D h m s ms us ns ps fs as
  int64_t scale = 1;
  std::string ToString() const;  // "10ms", "ns"
  bool operator==(const TimeUnit&) const = default;
};
bool IsTimeType(DataType dtype);
bool IsStringType(DataType dtype);
// Checks a unit name and scale as numpy allows them.
Result<TimeUnit> MakeTimeUnit(std::string_view unit, int64_t scale);

size_t ItemSize(DataType dtype);
// Datetime and timedelta types are kSigned: their values are int64.
DataTypeKind Kind(DataType dtype);
// The byte-swap unit: the component size (half the item size for complex types); 1 for string
// handles.
size_t SwapUnit(DataType dtype);
// "float32", "complex128", "numpy.datetime64" (whose v3 data_type also carries a TimeUnit)...
std::string_view V3Name(DataType dtype);
Result<DataType> ParseV3DataType(std::string_view name);

struct V2DataType {
  DataType dtype;
  Endian endian;
  TimeUnit time_unit;  // datetime64/timedelta64 only
  // Strings: "|S<n>" bytes or "<U<n>" code points; 0 for "|O" (kString until the object codec
  // in `filters` says otherwise).
  size_t string_width = 0;
};
// numpy typestr: "<f8", ">i4", "|b1", "|u1", "<M8[ns]", ">m8[10s]", "|O", "|S5", "<U3".
Result<V2DataType> ParseV2DataType(std::string_view typestr);
std::string V2Typestr(DataType dtype, Endian endian, const TimeUnit& time_unit = {},
                      size_t string_width = 0);

// Byte-swaps `count` elements of `unit` bytes each, in place.
void ByteSwap(void* data, size_t count, size_t unit);

// IEEE 754 binary16 conversions (round to nearest even).
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t half);

}  // namespace zarrd
