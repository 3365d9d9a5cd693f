// numcodecs' quantize filter: rounds floats to a power-of-two step fine enough for `digits`
// decimal digits, encoded = around(scale * x) / scale in `dtype`, stored as `astype`.
#include <cmath>

#include "common/codec/codec.h"
#include "common/codec/numpy_scalar.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

// numcodecs' scale, step by step as Python computes it (math.log(x, 10) is log(x) / log(10)).
double QuantizeScale(int64_t digits) {
  const double precision = std::pow(10.0, static_cast<double>(-digits));
  double exp = std::log(precision) / std::log(10.0);
  exp = exp < 0 ? std::floor(exp) : std::ceil(exp);
  const double bits = std::ceil(std::log(std::pow(10.0, -exp)) / std::log(2.0));
  return std::pow(2.0, bits);
}

class QuantizeCodec : public ArrayToArrayCodec {
 public:
  QuantizeCodec(FilterTypes types, int64_t digits)
      : types_(types), digits_(digits), scale_{DataType::kFloat64, 0, QuantizeScale(digits)} {}

  DataType EncodedDtype(DataType) const override { return types_.astype; }

  void Encode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t in_size = ItemSize(types_.dtype), out_size = ItemSize(types_.astype);
    const DataType scaled_type = ScalarOpType(types_.dtype, scale_);  // float16 * 2^17: float32
    const NumpyScalar scale = CastScalar(scale_, scaled_type);
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      const NumpyScalar x = CastScalar(LoadScalar(types_.dtype, in + i * in_size), scaled_type);
      const NumpyScalar rounded = TrueDivide(Around(Multiply(scale, x)), scale);
      StoreScalar(CastScalar(rounded, types_.astype), out + i * out_size);
    }
  }

  void Decode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t in_size = ItemSize(types_.astype), out_size = ItemSize(types_.dtype);
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      StoreScalar(CastScalar(LoadScalar(types_.astype, in + i * in_size), types_.dtype),
                  out + i * out_size);
    }
  }

  json ToJson() const override {
    return {{"name", "numcodecs.quantize"},
            {"configuration",
             {{"digits", digits_},
              {"dtype", NumcodecsTypestr(types_.dtype)},
              {"astype", NumcodecsTypestr(types_.astype)}}}};
  }

 private:
  FilterTypes types_;
  int64_t digits_;
  NumpyScalar scale_;
};

Result<std::unique_ptr<ArrayToArrayCodec>> MakeQuantize(const json& config, const ChunkSpec& spec) {
  ZARRD_ASSIGN_OR_RETURN(FilterTypes types, ParseFilterTypes(config, "quantize", spec.dtype));
  if (Kind(types.dtype) != DataTypeKind::kFloat || Kind(types.astype) != DataTypeKind::kFloat) {
    return internal::ConfigError("quantize", "dtype", "and astype must be float types");
  }
  if (!config.contains("digits") || !config["digits"].is_number_integer() ||
      std::abs(config["digits"].get<int64_t>()) > 300) {
    return internal::ConfigError("quantize", "digits", "must be an integer within +-300");
  }
  return std::unique_ptr<ArrayToArrayCodec>(
      new QuantizeCodec(types, config["digits"].get<int64_t>()));
}

}  // namespace

namespace internal {
Status RegisterQuantizeCodec(CodecRegistry& registry) {
  return registry.Register({.v2_ids = {"quantize"}, .make = &MakeQuantize});
}
}  // namespace internal

}  // namespace zarrd
