#include "common/dtype/dtype.h"

#include <array>
#include <cstring>

namespace zarrd {
namespace {

struct DataTypeInfo {
  DataType dtype;
  std::string_view v3_name;
  char v2_kind;
  size_t size;
  DataTypeKind kind;
};

constexpr std::array<DataTypeInfo, 18> kInfos = {{
    {DataType::kBool, "bool", 'b', 1, DataTypeKind::kBool},
    {DataType::kInt8, "int8", 'i', 1, DataTypeKind::kSigned},
    {DataType::kInt16, "int16", 'i', 2, DataTypeKind::kSigned},
    {DataType::kInt32, "int32", 'i', 4, DataTypeKind::kSigned},
    {DataType::kInt64, "int64", 'i', 8, DataTypeKind::kSigned},
    {DataType::kUint8, "uint8", 'u', 1, DataTypeKind::kUnsigned},
    {DataType::kUint16, "uint16", 'u', 2, DataTypeKind::kUnsigned},
    {DataType::kUint32, "uint32", 'u', 4, DataTypeKind::kUnsigned},
    {DataType::kUint64, "uint64", 'u', 8, DataTypeKind::kUnsigned},
    {DataType::kFloat16, "float16", 'f', 2, DataTypeKind::kFloat},
    {DataType::kFloat32, "float32", 'f', 4, DataTypeKind::kFloat},
    {DataType::kFloat64, "float64", 'f', 8, DataTypeKind::kFloat},
    {DataType::kComplex64, "complex64", 'c', 8, DataTypeKind::kComplex},
    {DataType::kComplex128, "complex128", 'c', 16, DataTypeKind::kComplex},
    {DataType::kDatetime64, "numpy.datetime64", 'M', 8, DataTypeKind::kSigned},
    {DataType::kTimedelta64, "numpy.timedelta64", 'm', 8, DataTypeKind::kSigned},
    // No v2 kind: their typestrs ("|O", "<U3", "|S5") are parsed apart.
    {DataType::kString, "string", 0, 8, DataTypeKind::kString},
    {DataType::kBytes, "bytes", 0, 8, DataTypeKind::kString},
}};

constexpr std::array<std::string_view, 13> kTimeUnits = {"Y",  "M",  "W",  "D",  "h",  "m", "s",
                                                         "ms", "us", "ns", "ps", "fs", "as"};

const DataTypeInfo& Info(DataType dtype) { return kInfos[static_cast<size_t>(dtype)]; }

}  // namespace

size_t ItemSize(DataType dtype) { return Info(dtype).size; }
DataTypeKind Kind(DataType dtype) { return Info(dtype).kind; }
size_t SwapUnit(DataType dtype) {
  if (IsStringType(dtype)) return 1;
  return Kind(dtype) == DataTypeKind::kComplex ? ItemSize(dtype) / 2 : ItemSize(dtype);
}
std::string_view V3Name(DataType dtype) { return Info(dtype).v3_name; }

bool IsTimeType(DataType dtype) {
  return dtype == DataType::kDatetime64 || dtype == DataType::kTimedelta64;
}

bool IsStringType(DataType dtype) { return Kind(dtype) == DataTypeKind::kString; }

std::string TimeUnit::ToString() const { return scale == 1 ? unit : std::to_string(scale) + unit; }

Result<TimeUnit> MakeTimeUnit(std::string_view unit, int64_t scale) {
  bool known = false;
  for (auto u : kTimeUnits) known = known || u == unit;
  if (!known) {
    return InvalidArgument("time unit \"" + std::string(unit) +
                           "\": expected one of Y M W D h m s ms us ns ps fs as");
  }
  if (scale < 1 || scale > (int64_t{1} << 31) - 1) {
    return InvalidArgument("time unit scale_factor " + std::to_string(scale) +
                           ": expected 1 to 2147483647");
  }
  return TimeUnit{std::string(unit), scale};
}

Result<DataType> ParseV3DataType(std::string_view name) {
  for (const auto& info : kInfos) {
    if (info.v3_name == name) return info.dtype;
  }
  return InvalidArgument("data_type: unsupported data type \"" + std::string(name) +
                         "\" (zarrd reads bool, int8-64, uint8-64, float16/32/64, "
                         "complex64/128, numpy.datetime64, numpy.timedelta64, string, bytes)");
}

Result<V2DataType> ParseV2DataType(std::string_view typestr) {
  auto unsupported = [&] {
    return InvalidArgument("dtype: unsupported data type \"" + std::string(typestr) +
                           "\" (zarrd reads numpy typestrs such as <f8, >i4, |b1, "
                           "<M8[ns], <m8[10s], |O, |S5, <U3)");
  };
  if (typestr == "|O") return V2DataType{DataType::kString, Endian::kLittle, {}, 0};
  if (typestr.size() >= 3 && (typestr[1] == 'S' || typestr[1] == 'U')) {
    const bool text = typestr[1] == 'U';
    const char order = typestr[0];
    if (text ? (order != '<' && order != '>') : order != '|') return unsupported();
    size_t width = 0;
    for (char c : typestr.substr(2)) {
      if (c < '0' || c > '9') return unsupported();
      width = width * 10 + static_cast<size_t>(c - '0');
      if (width > (size_t{1} << 30)) return unsupported();
    }
    if (width == 0) return unsupported();
    return V2DataType{text ? DataType::kString : DataType::kBytes,
                      typestr[0] == '>' ? Endian::kBig : Endian::kLittle,
                      {},
                      width};
  }
  TimeUnit time_unit;
  if (size_t open = typestr.find('['); open != std::string_view::npos) {
    if (typestr.back() != ']' || typestr.size() < 4 || (typestr[1] != 'M' && typestr[1] != 'm')) {
      return unsupported();
    }
    std::string_view spec = typestr.substr(open + 1, typestr.size() - open - 2);
    size_t digits = 0;
    int64_t scale = 0;
    while (digits < spec.size() && spec[digits] >= '0' && spec[digits] <= '9' &&
           scale < (1 << 30)) {
      scale = scale * 10 + (spec[digits++] - '0');
    }
    auto unit = MakeTimeUnit(spec.substr(digits), digits == 0 ? 1 : scale);
    if (!unit.ok()) return unit.status().WithContext("dtype \"" + std::string(typestr) + "\"");
    time_unit = *unit;
    typestr = typestr.substr(0, open);
  } else if (typestr.size() >= 2 && (typestr[1] == 'M' || typestr[1] == 'm')) {
    return unsupported();  // numpy's generic (unit-less) datetimes are not Zarr data
  }
  if (typestr.size() < 3) return unsupported();
  Endian endian;
  switch (typestr[0]) {
    case '<':
    case '|':
      endian = Endian::kLittle;
      break;
    case '>':
      endian = Endian::kBig;
      break;
    default:
      return unsupported();
  }
  char kind = typestr[1];
  size_t size = 0;
  for (char c : typestr.substr(2)) {
    if (c < '0' || c > '9') return unsupported();
    size = size * 10 + static_cast<size_t>(c - '0');
    if (size > 64) return unsupported();
  }
  for (const auto& info : kInfos) {
    if (info.v2_kind == kind && info.size == size) return V2DataType{info.dtype, endian, time_unit};
  }
  return unsupported();
}

std::string V2Typestr(DataType dtype, Endian endian, const TimeUnit& time_unit,
                      size_t string_width) {
  if (IsStringType(dtype)) {
    if (string_width == 0) return "|O";
    if (dtype == DataType::kBytes) return "|S" + std::to_string(string_width);
    return (endian == Endian::kBig ? ">U" : "<U") + std::to_string(string_width);
  }
  const auto& info = Info(dtype);
  char order = info.size == 1 ? '|' : (endian == Endian::kBig ? '>' : '<');
  std::string out = std::string(1, order) + info.v2_kind + std::to_string(info.size);
  return IsTimeType(dtype) ? out + "[" + time_unit.ToString() + "]" : out;
}

void ByteSwap(void* data, size_t count, size_t unit) {
  auto* p = static_cast<unsigned char*>(data);
  switch (unit) {
    case 1:
      return;
    case 2:
      for (size_t i = 0; i < count; ++i) {
        uint16_t v;
        std::memcpy(&v, p + 2 * i, 2);
        v = __builtin_bswap16(v);
        std::memcpy(p + 2 * i, &v, 2);
      }
      return;
    case 4:
      for (size_t i = 0; i < count; ++i) {
        uint32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        v = __builtin_bswap32(v);
        std::memcpy(p + 4 * i, &v, 4);
      }
      return;
    case 8:
      for (size_t i = 0; i < count; ++i) {
        uint64_t v;
        std::memcpy(&v, p + 8 * i, 8);
        v = __builtin_bswap64(v);
        std::memcpy(p + 8 * i, &v, 8);
      }
      return;
    default:
      for (size_t i = 0; i < count; ++i) {
        unsigned char* e = p + unit * i;
        for (size_t a = 0, b = unit - 1; a < b; ++a, --b) std::swap(e[a], e[b]);
      }
  }
}

uint16_t FloatToHalf(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  uint32_t sign = (f >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((f >> 23) & 0xffu);
  uint32_t mant = f & 0x7fffffu;
  if (exp == 0xff) {  // Inf or NaN; keep NaN quiet and non-zero.
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? (0x200u | (mant >> 13)) : 0u));
  }
  int32_t half_exp = exp - 127 + 15;
  if (half_exp >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (half_exp <= 0) {
    if (half_exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - half_exp);
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t half = sign | (static_cast<uint32_t>(half_exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into Inf: correct
  return static_cast<uint16_t>(half);
}

float HalfToFloat(uint16_t half) {
  uint32_t sign = (static_cast<uint32_t>(half) & 0x8000u) << 16;
  uint32_t exp = (half >> 10) & 0x1fu;
  uint32_t mant = half & 0x3ffu;
  uint32_t f;
  if (exp == 0) {
    if (mant == 0) {
      f = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      f = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    f = sign | 0x7f800000u | (mant << 13);
  } else {
    f = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &f, 4);
  return out;
}

}  // namespace zarrd
