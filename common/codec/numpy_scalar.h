// One numeric element as numpy computes with it, for numcodecs' filters (delta,
// fixedscaleoffset, quantize, bitround, astype): numpy's casts (astype), its arithmetic in an
// array's type (integers wrap, floats round to their type after each operation, float16 by way
// of float32 as numpy does), and its type of an array combined with a Python scalar.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/dtype/dtype.h"
#include "common/util/status.h"

namespace zarrd {

struct NumpyScalar {
  DataType dtype = DataType::kFloat64;
  uint64_t bits = 0;  // integer types: two's complement, sign- or zero-extended from the type
  double value = 0;   // float types: a value the type holds exactly
};

// Integer and float types (not bool, complex, datetime or timedelta).
bool IsNumpyArithmetic(DataType dtype);

NumpyScalar LoadScalar(DataType dtype, const uint8_t* p);
// In the scalar's own type, little-endian.
void StoreScalar(const NumpyScalar& s, uint8_t* p);

// numpy's astype. Integers wrap to the target's width; floats round to nearest; a float becomes
// an integer truncated toward zero, and a NaN, an infinity or a value outside int64 becomes what
// x86 gives numpy (the "integer indefinite" value, INT32_MIN for int32, else INT64_MIN cut to
// the target's width).
NumpyScalar CastScalar(const NumpyScalar& s, DataType to);

// Both operands of one type; the result has it.
NumpyScalar Add(const NumpyScalar& a, const NumpyScalar& b);
NumpyScalar Subtract(const NumpyScalar& a, const NumpyScalar& b);
NumpyScalar Multiply(const NumpyScalar& a, const NumpyScalar& b);
// numpy's true_divide: integers divide as float64.
NumpyScalar TrueDivide(const NumpyScalar& a, const NumpyScalar& b);
// np.around(x) (to even); integers unchanged.
NumpyScalar Around(const NumpyScalar& a);

// numpy's promote_types for integer and float types.
DataType PromoteTypes(DataType a, DataType b);

// A JSON number as the Python scalar numpy sees: int64 (uint64 past it) or float64.
NumpyScalar PythonScalar(const nlohmann::json& number);
// numpy 1.x's type of `array op scalar` (value-based casting): the array's type when the scalar
// fits it (an integer array with an integer scalar), float64 for an integer array with a float
// scalar, else promote_types(array type, min_scalar_type(scalar)): float16 * 1000 is float32.
DataType ScalarOpType(DataType array, const NumpyScalar& scalar);

// A numcodecs dtype field (`config[field]`): a numpy typestr ("<i4", "|u1", ">f8") or a Zarr v3
// name ("int32"), of an arithmetic type; `endian` gets its byte order (little when it has none).
Result<DataType> ParseNumcodecsDtype(const nlohmann::json& config, const std::string& codec,
                                     const std::string& field, Endian* endian = nullptr);
// The typestr numcodecs writes: "<i4", "|u1".
std::string NumcodecsTypestr(DataType dtype);

// The `dtype` and optional `astype` (default: `dtype`) fields of numcodecs' delta,
// fixedscaleoffset and quantize. `dtype` must be the type of the chunks reaching the filter:
// numcodecs would reinterpret their bytes, which no array zarr-python writes does.
struct FilterTypes {
  DataType dtype;
  DataType astype;
};
Result<FilterTypes> ParseFilterTypes(const nlohmann::json& config, const std::string& codec,
                                     DataType chunk_dtype);

}  // namespace zarrd
