#include <cstring>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

class BytesCodec : public ArrayToBytesCodec {
 public:
  BytesCodec(Endian endian, bool has_endian) : endian_(endian), has_endian_(has_endian) {}

  Status Encode(const ChunkSpec& spec, const uint8_t* in, Bytes* out) const override {
    out->assign(in, in + spec.num_bytes());
    if (endian_ == Endian::kBig) {
      ByteSwap(out->data(), out->size() / SwapUnit(spec.dtype), SwapUnit(spec.dtype));
    }
    return OkStatus();
  }

  Status Decode(const ChunkSpec& spec, ByteView in, uint8_t* out) const override {
    if (in.size() != spec.num_bytes()) {
      return DataLoss("bytes codec: chunk holds " + std::to_string(in.size()) +
                      " bytes, its shape needs " + std::to_string(spec.num_bytes()));
    }
    if (!in.empty()) std::memcpy(out, in.data(), in.size());  // null when empty
    if (endian_ == Endian::kBig) {
      ByteSwap(out, in.size() / SwapUnit(spec.dtype), SwapUnit(spec.dtype));
    }
    return OkStatus();
  }

  bool IsIdentity(const ChunkSpec& spec) const override {
    return endian_ == Endian::kLittle || SwapUnit(spec.dtype) == 1;
  }
  std::optional<size_t> EncodedSize(const ChunkSpec& spec) const override {
    return spec.num_bytes();
  }
  std::optional<Endian> byte_order() const override { return endian_; }

  json ToJson() const override {
    json j = {{"name", "bytes"}};
    if (has_endian_) {
      j["configuration"] = {{"endian", endian_ == Endian::kBig ? "big" : "little"}};
    }
    return j;
  }

 private:
  Endian endian_;
  bool has_endian_;
};

Result<std::unique_ptr<ArrayToBytesCodec>> MakeBytes(const json& config, const ChunkSpec& spec) {
  const DataType dtype = spec.dtype;
  for (const auto& [key, value] : config.items()) {
    if (key != "endian") return internal::ConfigError("bytes", key, "is not a known field");
  }
  if (!config.contains("endian")) {
    if (ItemSize(dtype) > 1) {
      return internal::ConfigError("bytes", "endian", "is required for multi-byte data types");
    }
    return std::unique_ptr<ArrayToBytesCodec>(new BytesCodec(Endian::kLittle, false));
  }
  const json& e = config["endian"];
  if (e == "little")
    return std::unique_ptr<ArrayToBytesCodec>(new BytesCodec(Endian::kLittle, true));
  if (e == "big") return std::unique_ptr<ArrayToBytesCodec>(new BytesCodec(Endian::kBig, true));
  return internal::ConfigError("bytes", "endian", "must be \"little\" or \"big\", got " + e.dump());
}

}  // namespace

namespace internal {
Status RegisterBytesCodec(CodecRegistry& registry) {
  return registry.Register({.v3_names = {"bytes"}, .make = &MakeBytes});
}
}  // namespace internal

}  // namespace zarrd
