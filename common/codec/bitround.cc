// numcodecs' bitround filter: rounds a float's mantissa to `keepbits` bits (to nearest, ties to
// even, on the integer that holds the float's bits). Decoding is the identity.
#include <cstring>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

int MantissaBits(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return 10;
    case DataType::kFloat32:
      return 23;
    default:
      return 52;
  }
}

class BitRoundCodec : public ArrayToArrayCodec {
 public:
  explicit BitRoundCodec(int keepbits) : keepbits_(keepbits) {}

  void Encode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t size = ItemSize(spec.dtype);
    const int maskbits = MantissaBits(spec.dtype) - keepbits_;
    if (maskbits == 0) {
      std::memcpy(out, in, spec.num_bytes());
      return;
    }
    const uint64_t mask = ~uint64_t{0} << maskbits;
    const uint64_t half_quantum = (uint64_t{1} << (maskbits - 1)) - 1;
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      uint64_t b = 0;
      std::memcpy(&b, in + i * size, size);  // little-endian host; the carry past `size` is cut
      b += ((b >> maskbits) & 1) + half_quantum;
      b &= mask;
      std::memcpy(out + i * size, &b, size);
    }
  }

  void Decode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    std::memcpy(out, in, spec.num_bytes());
  }

  json ToJson() const override {
    return {{"name", "numcodecs.bitround"}, {"configuration", {{"keepbits", keepbits_}}}};
  }

 private:
  int keepbits_;
};

Result<std::unique_ptr<ArrayToArrayCodec>> MakeBitRound(const json& config, const ChunkSpec& spec) {
  if (Kind(spec.dtype) != DataTypeKind::kFloat) {
    return InvalidArgument("codec \"bitround\": rounds float16, float32 and float64, not " +
                           std::string(V3Name(spec.dtype)));
  }
  const int bits = MantissaBits(spec.dtype);
  if (!config.contains("keepbits") || !config["keepbits"].is_number_integer() ||
      config["keepbits"].get<int64_t>() < 0 || config["keepbits"].get<int64_t>() > bits) {
    return internal::ConfigError("bitround", "keepbits",
                                 "must be an integer from 0 to " + std::to_string(bits) + " for " +
                                     std::string(V3Name(spec.dtype)));
  }
  return std::unique_ptr<ArrayToArrayCodec>(
      new BitRoundCodec(static_cast<int>(config["keepbits"].get<int64_t>())));
}

}  // namespace

namespace internal {
Status RegisterBitRoundCodec(CodecRegistry& registry) {
  return registry.Register({.v2_ids = {"bitround"}, .make = &MakeBitRound});
}
}  // namespace internal

}  // namespace zarrd
