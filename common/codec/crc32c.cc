#include "common/decode/crc32c.h"

#include <cstring>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

const decode::Crc32cTables& Tables() {
  static const decode::Crc32cTables tables = [] {
    decode::Crc32cTables t;
    decode::BuildCrc32cTables(&t);
    return t;
  }();
  return tables;
}

class Crc32cCodec : public BytesToBytesCodec {
 public:
  Status Encode(ByteView in, Bytes* out) const override {
    out->assign(in.begin(), in.end());
    uint32_t crc = Crc32c(in);
    out->resize(in.size() + 4);
    std::memcpy(out->data() + in.size(), &crc, 4);  // little-endian
    return OkStatus();
  }

  Status Decode(ByteView in, Bytes* out, size_t max_size) const override {
    ZARRD_RETURN_IF_ERROR(Verify(in));
    if (in.size() - 4 > max_size) return DataLoss("crc32c: payload larger than the chunk");
    out->assign(in.begin(), in.end() - 4);
    return OkStatus();
  }

  Status DecodeInto(ByteView in, MutableByteView out) const override {
    ZARRD_RETURN_IF_ERROR(Verify(in));
    if (in.size() - 4 != out.size()) {
      return DataLoss("crc32c: payload of " + std::to_string(in.size() - 4) + " bytes, expected " +
                      std::to_string(out.size()));
    }
    if (!out.empty()) std::memcpy(out.data(), in.data(), out.size());
    return OkStatus();
  }

  std::optional<size_t> EncodedSize(size_t decoded_size) const override { return decoded_size + 4; }
  json ToJson() const override { return {{"name", "crc32c"}}; }
  CompressorFamily family() const override { return CompressorFamily::kCrc32c; }

 private:
  static Status Verify(ByteView in) {
    if (in.size() < 4) return DataLoss("crc32c: shorter than its 4-byte checksum");
    uint32_t stored;
    std::memcpy(&stored, in.data() + in.size() - 4, 4);
    uint32_t actual = Crc32c(in.first(in.size() - 4));
    if (stored != actual) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "crc32c checksum mismatch: stored %08x, computed %08x",
                    stored, actual);
      return DataLoss(buf);
    }
    return OkStatus();
  }
};

}  // namespace

uint32_t Crc32c(ByteView data, uint32_t crc) {
  return ~decode::Crc32cUpdate(Tables(), ~crc, data.data(), data.size());
}

namespace {
Result<std::unique_ptr<BytesToBytesCodec>> MakeCrc32c(const json& config, const ChunkSpec&) {
  for (const auto& [key, value] : config.items()) {
    if (key == "location" && value == "end") continue;  // numcodecs spells out the default
    if (key != "id") return internal::ConfigError("crc32c", key, "is not a known field");
  }
  return std::unique_ptr<BytesToBytesCodec>(new Crc32cCodec());
}
}  // namespace

namespace internal {
Status RegisterCrc32cCodec(CodecRegistry& registry) {
  return registry.Register({.v3_names = {"crc32c"}, .v2_ids = {"crc32c"}, .make = &MakeCrc32c});
}
}  // namespace internal

}  // namespace zarrd
