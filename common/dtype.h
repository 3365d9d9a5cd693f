// Zarr's core numeric data types, and the v2 (numpy typestr) and v3 names of each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

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
};

enum class Endian : uint8_t { kLittle, kBig };

enum class DataTypeKind : uint8_t { kBool, kSigned, kUnsigned, kFloat, kComplex };

size_t ItemSize(DataType dtype);
DataTypeKind Kind(DataType dtype);
// The byte-swap unit: the component size (half the item size for complex types).
size_t SwapUnit(DataType dtype);
// "float32", "complex128", ...
std::string_view V3Name(DataType dtype);
Result<DataType> ParseV3DataType(std::string_view name);

struct V2DataType {
  DataType dtype;
  Endian endian;
};
// numpy typestr: "<f8", ">i4", "|b1", "|u1".
Result<V2DataType> ParseV2DataType(std::string_view typestr);
std::string V2Typestr(DataType dtype, Endian endian);

// Byte-swaps `count` elements of `unit` bytes each, in place.
void ByteSwap(void* data, size_t count, size_t unit);

// IEEE 754 binary16 conversions (round to nearest even).
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t half);

}  // namespace zarrd
