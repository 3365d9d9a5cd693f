// numcodecs' astype filter: stores `decode_dtype` chunks as `encode_dtype` (numpy's astype both
// ways).
#include "common/codec/codec.h"
#include "common/codec/numpy_scalar.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

class AsTypeCodec : public ArrayToArrayCodec {
 public:
  AsTypeCodec(DataType encode_dtype, DataType decode_dtype)
      : encode_dtype_(encode_dtype), decode_dtype_(decode_dtype) {}

  DataType EncodedDtype(DataType) const override { return encode_dtype_; }

  void Encode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    Convert(decode_dtype_, encode_dtype_, spec.num_elements(), in, out);
  }

  void Decode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    Convert(encode_dtype_, decode_dtype_, spec.num_elements(), in, out);
  }

  json ToJson() const override {
    return {{"name", "numcodecs.astype"},
            {"configuration",
             {{"encode_dtype", NumcodecsTypestr(encode_dtype_)},
              {"decode_dtype", NumcodecsTypestr(decode_dtype_)}}}};
  }

 private:
  static void Convert(DataType from, DataType to, int64_t n, const uint8_t* in, uint8_t* out) {
    const size_t in_size = ItemSize(from), out_size = ItemSize(to);
    for (int64_t i = 0; i < n; ++i) {
      StoreScalar(CastScalar(LoadScalar(from, in + i * in_size), to), out + i * out_size);
    }
  }

  DataType encode_dtype_, decode_dtype_;
};

Result<std::unique_ptr<ArrayToArrayCodec>> MakeAsType(const json& config, const ChunkSpec& spec) {
  ZARRD_ASSIGN_OR_RETURN(DataType encode_dtype,
                         ParseNumcodecsDtype(config, "astype", "encode_dtype"));
  ZARRD_ASSIGN_OR_RETURN(DataType decode_dtype,
                         ParseNumcodecsDtype(config, "astype", "decode_dtype"));
  if (decode_dtype != spec.dtype) {
    return internal::ConfigError("astype", "decode_dtype",
                                 config["decode_dtype"].dump() +
                                     " is not the type of the chunks it gets (" +
                                     std::string(V3Name(spec.dtype)) + ")");
  }
  return std::unique_ptr<ArrayToArrayCodec>(new AsTypeCodec(encode_dtype, decode_dtype));
}

}  // namespace

namespace internal {
Status RegisterAsTypeCodec(CodecRegistry& registry) {
  return registry.Register({.v2_ids = {"astype"}, .make = &MakeAsType});
}
}  // namespace internal

}  // namespace zarrd
