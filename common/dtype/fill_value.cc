#include "common/dtype/fill_value.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "common/dtype/string_arena.h"
#include "common/util/base64.h"
#include "common/util/strided_copy.h"

namespace zarrd {
namespace {

using nlohmann::json;

Status FieldError(const json& j, DataType dtype, const std::string& why) {
  return InvalidArgument("fill_value: " + j.dump() + " is not a valid " +
                         std::string(V3Name(dtype)) + " fill value (" + why + ")");
}

template <typename T>
FillValue ToBytes(T v) {
  FillValue out(sizeof(T));
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

Result<uint64_t> ParseHexBits(const std::string& s, size_t nbytes) {
  if (s.size() != 2 + 2 * nbytes) return InvalidArgument("hex bit pattern of wrong length");
  uint64_t bits = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    char c = s[i];
    int d = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) return InvalidArgument("bad hex digit");
    bits = (bits << 4) | static_cast<uint64_t>(d);
  }
  return bits;
}

// A float component (float16/32/64) from a number, "NaN", "Infinity", "-Infinity" or "0x..".
Result<FillValue> ParseFloatComponent(const json& j, size_t size, DataType dtype) {
  double d;
  if (j.is_number()) {
    d = j.get<double>();
  } else if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "NaN") {
      d = std::numeric_limits<double>::quiet_NaN();
    } else if (s == "Infinity") {
      d = std::numeric_limits<double>::infinity();
    } else if (s == "-Infinity") {
      d = -std::numeric_limits<double>::infinity();
    } else if (s.rfind("0x", 0) == 0) {
      auto bits = ParseHexBits(s, size);
      if (!bits.ok()) return FieldError(j, dtype, bits.status().message());
      FillValue out(size);
      std::memcpy(out.data(), &*bits, size);  // little-endian host
      return out;
    } else {
      return FieldError(j, dtype, "strings must be NaN, Infinity, -Infinity or 0x hex");
    }
  } else {
    return FieldError(j, dtype, "expected a number or string");
  }
  if (size == 2) return ToBytes(FloatToHalf(static_cast<float>(d)));
  if (size == 4) {
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
      return FieldError(j, dtype, "out of float32 range");
    }
    return ToBytes(static_cast<float>(d));
  }
  return ToBytes(d);
}

template <typename T>
Result<FillValue> ParseInteger(const json& j, DataType dtype) {
  if (j.is_number_integer()) {
    if constexpr (std::is_signed_v<T>) {
      if (j.is_number_unsigned()) {
        uint64_t u = j.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
          return FieldError(j, dtype, "out of range");
        }
        return ToBytes(static_cast<T>(u));
      }
      int64_t v = j.get<int64_t>();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        return FieldError(j, dtype, "out of range");
      }
      return ToBytes(static_cast<T>(v));
    } else {
      if (!j.is_number_unsigned()) return FieldError(j, dtype, "negative for an unsigned type");
      uint64_t u = j.get<uint64_t>();
      if (u > std::numeric_limits<T>::max()) return FieldError(j, dtype, "out of range");
      return ToBytes(static_cast<T>(u));
    }
  }
  if (j.is_number_float()) {  // Some writers store 0.0 for integer arrays.
    double d = j.get<double>();
    if (std::trunc(d) != d || d < static_cast<double>(std::numeric_limits<T>::min()) ||
        d > static_cast<double>(std::numeric_limits<T>::max())) {
      return FieldError(j, dtype, "not an integer in range");
    }
    return ToBytes(static_cast<T>(d));
  }
  return FieldError(j, dtype, "expected an integer");
}

template <typename T>
double LoadAs(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(v);
}

json FloatComponentToJson(const uint8_t* p, size_t size, ZarrFormat format) {
  double d = size == 2
                 ? static_cast<double>(HalfToFloat(static_cast<uint16_t>(LoadAs<uint16_t>(p))))
             : size == 4 ? LoadAs<float>(p)
                         : LoadAs<double>(p);
  if (std::isnan(d)) {
    // v3 keeps non-canonical NaN payloads as hex bit patterns.
    uint64_t bits = 0;
    std::memcpy(&bits, p, size);
    const uint64_t canonical = size == 2 ? 0x7e00u : size == 4 ? 0x7fc00000u : 0x7ff8000000000000u;
    if (format == ZarrFormat::kV3 && bits != canonical) {
      static const char* kHex = "0123456789abcdef";
      std::string s = "0x";
      for (int i = static_cast<int>(size) * 2 - 1; i >= 0; --i) s += kHex[(bits >> (4 * i)) & 0xf];
      return s;
    }
    return "NaN";
  }
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

}  // namespace

FillValue ZeroFillValue(DataType dtype) { return FillValue(ItemSize(dtype), 0); }

FillValue StringFillValue(std::string_view value) {
  FillValue out(kStringHandleSize);
  SharedString s = InternString(value);
  StoreStringHandle(out.data(), s.get());
  out.holds = std::move(s);
  return out;
}

namespace {

// Text as a JSON string; bytes base64-encoded (as zarr 2 writes a "|S<n>" fill value). v2 also
// has 0 and null, which zarr 2 writes for "|O" arrays: the empty string.
Result<FillValue> ParseStringFillValue(const json& j, DataType dtype, ZarrFormat format) {
  if (format == ZarrFormat::kV2 && (j.is_null() || (j.is_number() && j == 0))) {
    // The null handle: read as "", written back as 0, and (as zarr 2's integer 0) no label of
    // categorize.
    return FillValue(kStringHandleSize, 0);
  }
  if (!j.is_string()) {
    return FieldError(j, dtype,
                      dtype == DataType::kString ? "expected a string" : "expected base64 text");
  }
  if (dtype == DataType::kString) return StringFillValue(j.get<std::string>());
  auto bytes = Base64Decode(j.get<std::string>());
  if (!bytes) return FieldError(j, dtype, "expected base64 text");
  return StringFillValue(*bytes);
}

}  // namespace

Result<FillValue> ParseFillValue(const json& j, DataType dtype, ZarrFormat format) {
  if (IsStringType(dtype)) return ParseStringFillValue(j, dtype, format);
  if (j.is_null()) {
    if (format == ZarrFormat::kV2) return ZeroFillValue(dtype);
    return InvalidArgument("fill_value: required in Zarr v3 metadata, got null");
  }
  switch (dtype) {
    case DataType::kBool:
      if (j.is_boolean()) return FillValue{static_cast<uint8_t>(j.get<bool>() ? 1 : 0)};
      if (format == ZarrFormat::kV2 && j.is_number_integer() &&
          (j.get<int64_t>() == 0 || j.get<int64_t>() == 1)) {
        return FillValue{static_cast<uint8_t>(j.get<int64_t>())};
      }
      return FieldError(j, dtype, "expected true or false");
    case DataType::kInt8:
      return ParseInteger<int8_t>(j, dtype);
    case DataType::kInt16:
      return ParseInteger<int16_t>(j, dtype);
    case DataType::kInt32:
      return ParseInteger<int32_t>(j, dtype);
    case DataType::kInt64:
      return ParseInteger<int64_t>(j, dtype);
    case DataType::kDatetime64:
    case DataType::kTimedelta64:
      if (j.is_string() && j.get<std::string>() == "NaT") {
        return ToBytes(std::numeric_limits<int64_t>::min());
      }
      return ParseInteger<int64_t>(j, dtype);
    case DataType::kUint8:
      return ParseInteger<uint8_t>(j, dtype);
    case DataType::kUint16:
      return ParseInteger<uint16_t>(j, dtype);
    case DataType::kUint32:
      return ParseInteger<uint32_t>(j, dtype);
    case DataType::kUint64:
      return ParseInteger<uint64_t>(j, dtype);
    case DataType::kFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:
      return ParseFloatComponent(j, ItemSize(dtype), dtype);
    case DataType::kComplex64:
    case DataType::kComplex128: {
      size_t half = ItemSize(dtype) / 2;
      if (format == ZarrFormat::kV2 && j.is_number()) {  // zarr-python 2 accepts a real number
        ZARRD_ASSIGN_OR_RETURN(FillValue re, ParseFloatComponent(j, half, dtype));
        re.resize(2 * half, 0);
        return re;
      }
      if (!j.is_array() || j.size() != 2) return FieldError(j, dtype, "expected [real, imag]");
      ZARRD_ASSIGN_OR_RETURN(FillValue re, ParseFloatComponent(j[0], half, dtype));
      ZARRD_ASSIGN_OR_RETURN(FillValue im, ParseFloatComponent(j[1], half, dtype));
      re.insert(re.end(), im.begin(), im.end());
      return re;
    }
    case DataType::kString:
    case DataType::kBytes:
      break;  // above
  }
  return Internal("fill_value: unhandled data type");
}

json FillValueToJson(const FillValue& value, DataType dtype, ZarrFormat format) {
  const uint8_t* p = value.data();
  switch (dtype) {
    case DataType::kBool:
      return p[0] != 0;
    case DataType::kInt8:
      return static_cast<int64_t>(static_cast<int8_t>(p[0]));
    case DataType::kInt16:
      return static_cast<int64_t>(LoadAs<int16_t>(p));
    case DataType::kInt32:
      return static_cast<int64_t>(LoadAs<int32_t>(p));
    case DataType::kInt64:
    case DataType::kDatetime64:
    case DataType::kTimedelta64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DataType::kUint8:
      return static_cast<uint64_t>(p[0]);
    case DataType::kUint16:
      return static_cast<uint64_t>(LoadAs<uint16_t>(p));
    case DataType::kUint32:
      return static_cast<uint64_t>(LoadAs<uint32_t>(p));
    case DataType::kUint64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DataType::kFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:
      return FloatComponentToJson(p, ItemSize(dtype), format);
    case DataType::kComplex64:
    case DataType::kComplex128: {
      size_t half = ItemSize(dtype) / 2;
      return json::array(
          {FloatComponentToJson(p, half, format), FloatComponentToJson(p + half, half, format)});
    }
    case DataType::kString:
    case DataType::kBytes:
      if (format == ZarrFormat::kV2 && value == FillValue(kStringHandleSize, 0)) return 0;
      if (dtype == DataType::kString) return LoadStringHandle(p);
      return Base64Encode(LoadStringHandle(p));
  }
  return nullptr;
}

bool AllFill(const uint8_t* data, size_t count, const FillValue& fill, DataType dtype) {
  if (!IsStringType(dtype)) return AllEqual(data, count, fill.data(), ItemSize(dtype));
  const std::string& text = LoadStringHandle(fill.data());
  for (size_t i = 0; i < count; ++i) {
    if (LoadStringHandle(data + i * kStringHandleSize) != text) return false;
  }
  return true;
}

}  // namespace zarrd
