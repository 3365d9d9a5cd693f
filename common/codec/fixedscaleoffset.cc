// numcodecs' fixedscaleoffset filter: encoded = around((x - offset) * scale) as `astype`,
// decoded = encoded / scale + offset as `dtype`, each step in the type numpy gives an array
// combined with a Python number (so offset and scale keep the JSON's int or float).
#include "common/codec/codec.h"
#include "common/codec/numpy_scalar.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

class FixedScaleOffsetCodec : public ArrayToArrayCodec {
 public:
  FixedScaleOffsetCodec(FilterTypes types, json offset, json scale)
      : types_(types),
        offset_json_(std::move(offset)),
        scale_json_(std::move(scale)),
        offset_(PythonScalar(offset_json_)),
        scale_(PythonScalar(scale_json_)),
        shifted_type_(ScalarOpType(types_.dtype, offset_)),
        scaled_type_(ScalarOpType(shifted_type_, scale_)),
        divided_type_(Kind(types_.astype) == DataTypeKind::kFloat ? types_.astype
                                                                  : DataType::kFloat64),
        restored_type_(ScalarOpType(divided_type_, offset_)) {}

  DataType EncodedDtype(DataType) const override { return types_.astype; }

  void Encode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t in_size = ItemSize(types_.dtype), out_size = ItemSize(types_.astype);
    const NumpyScalar offset = CastScalar(offset_, shifted_type_);
    const NumpyScalar scale = CastScalar(scale_, scaled_type_);
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      const NumpyScalar x = CastScalar(LoadScalar(types_.dtype, in + i * in_size), shifted_type_);
      const NumpyScalar scaled = Multiply(CastScalar(Subtract(x, offset), scaled_type_), scale);
      StoreScalar(CastScalar(Around(scaled), types_.astype), out + i * out_size);
    }
  }

  void Decode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t in_size = ItemSize(types_.astype), out_size = ItemSize(types_.dtype);
    const NumpyScalar scale = CastScalar(scale_, divided_type_);
    const NumpyScalar offset = CastScalar(offset_, restored_type_);
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      const NumpyScalar x = LoadScalar(types_.astype, in + i * in_size);
      const NumpyScalar divided = TrueDivide(CastScalar(x, divided_type_), scale);
      const NumpyScalar restored = Add(CastScalar(divided, restored_type_), offset);
      StoreScalar(CastScalar(restored, types_.dtype), out + i * out_size);
    }
  }

  json ToJson() const override {
    return {{"name", "numcodecs.fixedscaleoffset"},
            {"configuration",
             {{"offset", offset_json_},
              {"scale", scale_json_},
              {"dtype", NumcodecsTypestr(types_.dtype)},
              {"astype", NumcodecsTypestr(types_.astype)}}}};
  }

 private:
  FilterTypes types_;
  json offset_json_, scale_json_;
  NumpyScalar offset_, scale_;
  // (x - offset), (... * scale), (encoded / scale), (... + offset)
  DataType shifted_type_, scaled_type_, divided_type_, restored_type_;
};

Result<std::unique_ptr<ArrayToArrayCodec>> MakeFixedScaleOffset(const json& config,
                                                                const ChunkSpec& spec) {
  ZARRD_ASSIGN_OR_RETURN(FilterTypes types,
                         ParseFilterTypes(config, "fixedscaleoffset", spec.dtype));
  for (const char* field : {"offset", "scale"}) {
    if (!config.contains(field) || !config[field].is_number()) {
      return internal::ConfigError("fixedscaleoffset", field, "must be a number");
    }
  }
  return std::unique_ptr<ArrayToArrayCodec>(
      new FixedScaleOffsetCodec(types, config["offset"], config["scale"]));
}

}  // namespace

namespace internal {
Status RegisterFixedScaleOffsetCodec(CodecRegistry& registry) {
  return registry.Register({.v2_ids = {"fixedscaleoffset"}, .make = &MakeFixedScaleOffset});
}
}  // namespace internal

}  // namespace zarrd
