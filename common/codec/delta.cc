// numcodecs' delta filter: the flattened chunk's first element, then the differences of
// adjacent elements, computed in `dtype` and stored as `astype`; decoding sums them in `dtype`.
#include "common/codec/codec.h"
#include "common/codec/numpy_scalar.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

class DeltaCodec : public ArrayToArrayCodec {
 public:
  explicit DeltaCodec(FilterTypes types) : types_(types) {}

  DataType EncodedDtype(DataType) const override { return types_.astype; }

  void Encode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t in_size = ItemSize(types_.dtype), out_size = ItemSize(types_.astype);
    NumpyScalar previous;
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      const NumpyScalar x = LoadScalar(types_.dtype, in + i * in_size);
      const NumpyScalar delta = i == 0 ? x : Subtract(x, previous);
      StoreScalar(CastScalar(delta, types_.astype), out + i * out_size);
      previous = x;
    }
  }

  // np.cumsum(encoded, out=decoded) sums in the type both promote to and casts each sum.
  void Decode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t in_size = ItemSize(types_.astype), out_size = ItemSize(types_.dtype);
    const DataType sum_type = PromoteTypes(types_.astype, types_.dtype);
    NumpyScalar sum;
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      const NumpyScalar x = CastScalar(LoadScalar(types_.astype, in + i * in_size), sum_type);
      sum = i == 0 ? x : Add(sum, x);
      StoreScalar(CastScalar(sum, types_.dtype), out + i * out_size);
    }
  }

  json ToJson() const override {
    return {
        {"name", "numcodecs.delta"},
        {"configuration",
         {{"dtype", NumcodecsTypestr(types_.dtype)}, {"astype", NumcodecsTypestr(types_.astype)}}}};
  }

 private:
  FilterTypes types_;
};

Result<std::unique_ptr<ArrayToArrayCodec>> MakeDelta(const json& config, const ChunkSpec& spec) {
  ZARRD_ASSIGN_OR_RETURN(FilterTypes types, ParseFilterTypes(config, "delta", spec.dtype));
  return std::unique_ptr<ArrayToArrayCodec>(new DeltaCodec(types));
}

}  // namespace

namespace internal {
Status RegisterDeltaCodec(CodecRegistry& registry) {
  return registry.Register({.v2_ids = {"delta"}, .make = &MakeDelta});
}
}  // namespace internal

}  // namespace zarrd
