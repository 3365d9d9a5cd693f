#include <algorithm>
#include <cstring>
#include <vector>

#include "common/codec/codec.h"
#include "common/codec/registry.h"
#include "common/util/utf8.h"

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

// numpy's fixed-length strings, as zarr 2 stores them: "|S<n>" as n bytes, "<U<n>" / ">U<n>" as
// n UTF-32 code points, each NUL-padded (numpy strips trailing NULs when it reads them).
class FixedStringCodec : public ArrayToBytesCodec {
 public:
  FixedStringCodec(bool text, size_t width, Endian endian)
      : text_(text), width_(width), endian_(endian) {}

  Status Encode(const ChunkSpec& spec, const uint8_t* in, Bytes* out) const override {
    const size_t n = static_cast<size_t>(spec.num_elements()), item = ItemBytes();
    out->assign(n * item, 0);
    std::vector<char32_t> points(text_ ? width_ : 0);
    for (size_t i = 0; i < n; ++i) {
      const std::string& s = LoadStringHandle(in + i * kStringHandleSize);
      uint8_t* dst = out->data() + i * item;
      if (!text_) {
        std::memcpy(dst, s.data(), std::min(s.size(), width_));
        continue;
      }
      const size_t count = Utf8ToUtf32(s, width_, points.data());
      std::memcpy(dst, points.data(), count * 4);
    }
    if (text_ && endian_ == Endian::kBig) ByteSwap(out->data(), out->size() / 4, 4);
    return OkStatus();
  }

  Status Decode(const ChunkSpec& spec, ByteView in, uint8_t* out) const override {
    if (!spec.strings) return Internal("bytes: no string arena to decode into");
    const size_t n = static_cast<size_t>(spec.num_elements()), item = ItemBytes();
    if (in.size() != n * item) {
      return DataLoss("bytes codec: chunk holds " + std::to_string(in.size()) +
                      " bytes, its shape needs " + std::to_string(n * item));
    }
    ZARRD_RETURN_IF_ERROR(spec.strings->Fits(StringArena::MemoryOf(n, in.size())));
    std::vector<std::string> strings(n);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* p = in.data() + i * item;
      if (!text_) {
        size_t len = width_;
        while (len > 0 && p[len - 1] == 0) --len;
        strings[i].assign(reinterpret_cast<const char*>(p), len);
        continue;
      }
      size_t len = width_;
      auto point = [&](size_t k) {
        uint32_t v;
        std::memcpy(&v, p + 4 * k, 4);
        return endian_ == Endian::kBig ? __builtin_bswap32(v) : v;
      };
      while (len > 0 && point(len - 1) == 0) --len;
      for (size_t k = 0; k < len; ++k) {
        if (!AppendUtf8(point(k), &strings[i])) {
          return DataLoss("bytes codec: element " + std::to_string(i) +
                          " holds a code point past U+10FFFF");
        }
      }
    }
    return spec.strings->Adopt(std::move(strings), out);
  }

  std::optional<size_t> EncodedSize(const ChunkSpec& spec) const override {
    return static_cast<size_t>(spec.num_elements()) * ItemBytes();
  }

  json ToJson() const override {
    return {{"name", "bytes"},
            {"configuration", {{"endian", endian_ == Endian::kBig ? "big" : "little"}}}};
  }

 private:
  size_t ItemBytes() const { return text_ ? 4 * width_ : width_; }
  bool text_;
  size_t width_;
  Endian endian_;
};

Result<std::unique_ptr<ArrayToBytesCodec>> MakeBytes(const json& config, const ChunkSpec& spec) {
  const DataType dtype = spec.dtype;
  if (IsStringType(dtype)) {
    if (spec.string_width == 0) {
      return InvalidArgument(
          "codecs: \"bytes\" cannot encode variable-length strings: data type string takes "
          "vlen-utf8, bytes takes vlen-bytes");
    }
    const Endian endian =
        config.contains("endian") && config["endian"] == "big" ? Endian::kBig : Endian::kLittle;
    return std::unique_ptr<ArrayToBytesCodec>(
        new FixedStringCodec(dtype == DataType::kString, spec.string_width, endian));
  }
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
