#include "common/codec/numpy_scalar.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "common/codec/codec.h"

namespace zarrd {
namespace {

using nlohmann::json;

bool IsFloat(DataType dtype) { return Kind(dtype) == DataTypeKind::kFloat; }
bool IsSigned(DataType dtype) { return Kind(dtype) == DataTypeKind::kSigned; }

// Sign- or zero-extends the low bytes of `bits` that the type holds.
uint64_t WrapBits(DataType dtype, uint64_t bits) {
  const size_t width = 8 * ItemSize(dtype);
  if (width == 64) return bits;
  const uint64_t mask = (uint64_t{1} << width) - 1;
  bits &= mask;
  if (IsSigned(dtype) && (bits >> (width - 1)) & 1) bits |= ~mask;
  return bits;
}

// Rounds a double to the float type (float16 by way of float32, as numpy computes it).
double RoundTo(DataType dtype, double v) {
  switch (dtype) {
    case DataType::kFloat16:
      return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case DataType::kFloat32:
      return static_cast<float>(v);
    default:
      return v;
  }
}

NumpyScalar Integer(DataType dtype, uint64_t bits) { return {dtype, WrapBits(dtype, bits), 0}; }
NumpyScalar Float(DataType dtype, double v) { return {dtype, 0, RoundTo(dtype, v)}; }

double ToDouble(const NumpyScalar& s) {
  if (IsFloat(s.dtype)) return s.value;
  if (IsSigned(s.dtype)) return static_cast<double>(static_cast<int64_t>(s.bits));
  return static_cast<double>(s.bits);
}

// C's float-to-integer conversion as x86 does it (cvttsd2si).
uint64_t TruncateToInteger(double v, DataType to) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (to == DataType::kInt32) {
    if (!(v > -2147483649.0 && v < 2147483648.0)) return 0xffffffff80000000u;
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  if (to == DataType::kUint64 && v >= kTwo63 && v < 2 * kTwo63) return static_cast<uint64_t>(v);
  if (!(v >= -kTwo63 && v < kTwo63)) return uint64_t{1} << 63;
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

template <typename IntOp, typename FloatOp>
NumpyScalar Binary(const NumpyScalar& a, const NumpyScalar& b, IntOp int_op, FloatOp float_op) {
  if (IsFloat(a.dtype)) return Float(a.dtype, float_op(a.value, b.value));
  return Integer(a.dtype, int_op(a.bits, b.bits));
}

}  // namespace

bool IsNumpyArithmetic(DataType dtype) {
  if (IsTimeType(dtype)) return false;
  const DataTypeKind kind = Kind(dtype);
  return kind == DataTypeKind::kSigned || kind == DataTypeKind::kUnsigned ||
         kind == DataTypeKind::kFloat;
}

NumpyScalar LoadScalar(DataType dtype, const uint8_t* p) {
  switch (dtype) {
    case DataType::kFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return {dtype, 0, HalfToFloat(h)};
    }
    case DataType::kFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return {dtype, 0, f};
    }
    case DataType::kFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return {dtype, 0, d};
    }
    default: {
      uint64_t bits = 0;
      std::memcpy(&bits, p, ItemSize(dtype));  // little-endian host
      return Integer(dtype, bits);
    }
  }
}

void StoreScalar(const NumpyScalar& s, uint8_t* p) {
  switch (s.dtype) {
    case DataType::kFloat16: {
      const uint16_t h = FloatToHalf(static_cast<float>(s.value));
      std::memcpy(p, &h, 2);
      return;
    }
    case DataType::kFloat32: {
      const float f = static_cast<float>(s.value);
      std::memcpy(p, &f, 4);
      return;
    }
    case DataType::kFloat64:
      std::memcpy(p, &s.value, 8);
      return;
    default:
      std::memcpy(p, &s.bits, ItemSize(s.dtype));
  }
}

NumpyScalar CastScalar(const NumpyScalar& s, DataType to) {
  if (IsFloat(to)) return Float(to, ToDouble(s));
  if (IsFloat(s.dtype)) return Integer(to, TruncateToInteger(s.value, to));
  return Integer(to, s.bits);
}

NumpyScalar Add(const NumpyScalar& a, const NumpyScalar& b) {
  return Binary(
      a, b, [](uint64_t x, uint64_t y) { return x + y; }, [](double x, double y) { return x + y; });
}

NumpyScalar Subtract(const NumpyScalar& a, const NumpyScalar& b) {
  return Binary(
      a, b, [](uint64_t x, uint64_t y) { return x - y; }, [](double x, double y) { return x - y; });
}

NumpyScalar Multiply(const NumpyScalar& a, const NumpyScalar& b) {
  return Binary(
      a, b, [](uint64_t x, uint64_t y) { return x * y; }, [](double x, double y) { return x * y; });
}

NumpyScalar TrueDivide(const NumpyScalar& a, const NumpyScalar& b) {
  if (!IsFloat(a.dtype)) return Float(DataType::kFloat64, ToDouble(a) / ToDouble(b));
  return Float(a.dtype, a.value / b.value);
}

NumpyScalar Around(const NumpyScalar& a) {
  if (!IsFloat(a.dtype)) return a;
  return Float(a.dtype, std::nearbyint(a.value));  // the default rounding mode: to even
}

NumpyScalar PythonScalar(const json& number) {
  if (number.is_number_unsigned() &&
      number.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) {
    return {DataType::kUint64, number.get<uint64_t>(), 0};
  }
  if (number.is_number_integer()) {
    return {DataType::kInt64, static_cast<uint64_t>(number.get<int64_t>()), 0};
  }
  return {DataType::kFloat64, 0, number.get<double>()};
}

namespace {

DataType SignedOfSize(size_t size) {
  switch (size) {
    case 1:
      return DataType::kInt8;
    case 2:
      return DataType::kInt16;
    case 4:
      return DataType::kInt32;
    default:
      return DataType::kInt64;
  }
}

}  // namespace

DataType PromoteTypes(DataType a, DataType b) {
  const size_t sa = ItemSize(a), sb = ItemSize(b);
  if (IsFloat(a) && IsFloat(b)) return sa >= sb ? a : b;
  if (IsFloat(a) || IsFloat(b)) {
    const DataType f = IsFloat(a) ? a : b;
    const size_t integer = IsFloat(a) ? sb : sa;
    if (integer >= 4) return DataType::kFloat64;
    if (integer == 2 && f == DataType::kFloat16) return DataType::kFloat32;
    return f;
  }
  if (IsSigned(a) == IsSigned(b)) return sa >= sb ? a : b;
  const DataType s = IsSigned(a) ? a : b, u = IsSigned(a) ? b : a;
  if (ItemSize(u) < ItemSize(s)) return s;
  if (ItemSize(u) == 8) return DataType::kFloat64;
  return SignedOfSize(2 * ItemSize(u));
}

namespace {

// numpy's min_scalar_type.
DataType MinScalarType(const NumpyScalar& s) {
  if (IsFloat(s.dtype)) {
    const double v = std::fabs(s.value);
    if (!std::isfinite(v) || v <= 65504.0) return DataType::kFloat16;
    return v <= std::numeric_limits<float>::max() ? DataType::kFloat32 : DataType::kFloat64;
  }
  if (s.dtype == DataType::kUint64 || static_cast<int64_t>(s.bits) >= 0) {
    const uint64_t v = s.bits;
    if (v <= 0xff) return DataType::kUint8;
    if (v <= 0xffff) return DataType::kUint16;
    return v <= 0xffffffffu ? DataType::kUint32 : DataType::kUint64;
  }
  const int64_t v = static_cast<int64_t>(s.bits);
  if (v >= -128) return DataType::kInt8;
  if (v >= -32768) return DataType::kInt16;
  return v >= -2147483648LL ? DataType::kInt32 : DataType::kInt64;
}

}  // namespace

DataType ScalarOpType(DataType array, const NumpyScalar& scalar) {
  if (IsFloat(array)) return PromoteTypes(array, MinScalarType(scalar));
  if (IsFloat(scalar.dtype)) return DataType::kFloat64;
  const NumpyScalar in_array = CastScalar(scalar, array);
  const bool fits =
      in_array.bits == scalar.bits && (IsSigned(array) || scalar.dtype == DataType::kUint64 ||
                                       static_cast<int64_t>(scalar.bits) >= 0);
  return fits ? array : PromoteTypes(array, MinScalarType(scalar));
}

Result<DataType> ParseNumcodecsDtype(const json& config, const std::string& codec,
                                     const std::string& field, Endian* endian) {
  if (!config.contains(field) || !config[field].is_string()) {
    return internal::ConfigError(codec, field, "must be a numpy dtype string");
  }
  const std::string name = config[field].get<std::string>();
  DataType dtype;
  Endian order = Endian::kLittle;
  if (auto typestr = ParseV2DataType(name); typestr.ok()) {
    dtype = typestr->dtype;
    order = typestr->endian;
  } else if (auto v3 = ParseV3DataType(name); v3.ok()) {
    dtype = *v3;
  } else {
    return internal::ConfigError(codec, field, "\"" + name + "\" is not a data type");
  }
  if (!IsNumpyArithmetic(dtype)) {
    return internal::ConfigError(
        codec, field, "\"" + name + "\": zarrd's " + codec + " takes integer and float types");
  }
  if (endian) *endian = order;
  return dtype;
}

std::string NumcodecsTypestr(DataType dtype) { return V2Typestr(dtype, Endian::kLittle); }

Result<FilterTypes> ParseFilterTypes(const json& config, const std::string& codec,
                                     DataType chunk_dtype) {
  FilterTypes types;
  ZARRD_ASSIGN_OR_RETURN(types.dtype, ParseNumcodecsDtype(config, codec, "dtype"));
  types.astype = types.dtype;
  if (config.contains("astype") && !config["astype"].is_null()) {
    ZARRD_ASSIGN_OR_RETURN(types.astype, ParseNumcodecsDtype(config, codec, "astype"));
  }
  if (types.dtype != chunk_dtype) {
    return internal::ConfigError(codec, "dtype",
                                 config["dtype"].dump() +
                                     " is not the type of the chunks it gets (" +
                                     std::string(V3Name(chunk_dtype)) + ")");
  }
  return types;
}

}  // namespace zarrd
