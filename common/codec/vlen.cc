// numcodecs' VLenUTF8 and VLenBytes, zarr-python 3's vlen-utf8 and vlen-bytes codecs: a uint32
// LE item count, then each item's uint32 LE byte length and bytes. Decoded chunks hold string
// handles (common/dtype/string_arena.h).
#include <cstring>

#include "common/codec/codec.h"
#include "common/codec/registry.h"
#include "common/util/utf8.h"

namespace zarrd {
namespace {

using nlohmann::json;

uint32_t LoadLE32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void AppendLE32(uint32_t v, Bytes* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

class VLenCodec : public ArrayToBytesCodec {
 public:
  explicit VLenCodec(bool utf8) : utf8_(utf8) {}

  Status Encode(const ChunkSpec& spec, const uint8_t* in, Bytes* out) const override {
    const size_t n = static_cast<size_t>(spec.num_elements());
    size_t total = 4 + 4 * n;
    for (size_t i = 0; i < n; ++i) {
      const std::string& s = LoadStringHandle(in + i * kStringHandleSize);
      if (s.size() > UINT32_MAX) return InvalidArgument(name() + ": an item exceeds 4 GiB");
      total += s.size();
    }
    if (n > UINT32_MAX || total > kMaxVlenChunkBytes) {
      return InvalidArgument(name() + ": a chunk of " + std::to_string(total) + " bytes exceeds " +
                             std::to_string(kMaxVlenChunkBytes));
    }
    out->clear();
    out->reserve(total);
    AppendLE32(static_cast<uint32_t>(n), out);
    for (size_t i = 0; i < n; ++i) {
      const std::string& s = LoadStringHandle(in + i * kStringHandleSize);
      AppendLE32(static_cast<uint32_t>(s.size()), out);
      out->insert(out->end(), s.begin(), s.end());
    }
    return OkStatus();
  }

  // Every count and length is checked against the bytes present before anything is allocated.
  Status Decode(const ChunkSpec& spec, ByteView in, uint8_t* out) const override {
    if (!spec.strings) return Internal(name() + ": no string arena to decode into");
    const uint64_t n = static_cast<uint64_t>(spec.num_elements());
    if (in.size() < 4) {
      return DataLoss(name() + ": chunk of " + std::to_string(in.size()) +
                      " bytes has no item count");
    }
    const uint32_t count = LoadLE32(in.data());
    if (count != n) {
      return DataLoss(name() + ": chunk holds " + std::to_string(count) +
                      " items, its shape needs " + std::to_string(n));
    }
    if (n > (in.size() - 4) / 4) {
      return DataLoss(name() + ": chunk of " + std::to_string(in.size()) + " bytes cannot hold " +
                      std::to_string(n) + " items");
    }
    ZARRD_RETURN_IF_ERROR(spec.strings->Fits(StringArena::MemoryOf(n, in.size())));
    std::vector<std::string> strings;
    strings.reserve(n);
    size_t at = 4;
    for (uint64_t i = 0; i < n; ++i) {
      if (in.size() - at < 4)
        return DataLoss(name() + ": item " + std::to_string(i) + " is cut off");
      const uint32_t len = LoadLE32(in.data() + at);
      at += 4;
      if (len > in.size() - at) {
        return DataLoss(name() + ": item " + std::to_string(i) + " of " + std::to_string(len) +
                        " bytes runs past the chunk's end");
      }
      std::string_view item(reinterpret_cast<const char*>(in.data()) + at, len);
      if (utf8_ && !IsValidUtf8(item)) {
        return DataLoss(name() + ": item " + std::to_string(i) + " is not UTF-8");
      }
      strings.emplace_back(item);
      at += len;
    }
    return spec.strings->Adopt(std::move(strings), out);
  }

  json ToJson() const override { return {{"name", name()}, {"configuration", json::object()}}; }

 private:
  std::string name() const { return utf8_ ? "vlen-utf8" : "vlen-bytes"; }
  bool utf8_;
};

Result<std::unique_ptr<ArrayToBytesCodec>> Make(const json& config, const ChunkSpec& spec,
                                                bool utf8) {
  const std::string name = utf8 ? "vlen-utf8" : "vlen-bytes";
  for (const auto& [key, value] : config.items()) {
    if (key != "id") return internal::ConfigError(name, key, "is not a known field");
  }
  const DataType want = utf8 ? DataType::kString : DataType::kBytes;
  if (spec.dtype != want || spec.string_width != 0) {
    return InvalidArgument("codecs: \"" + name + "\" encodes arrays of data type " +
                           std::string(V3Name(want)) + ", not " + std::string(V3Name(spec.dtype)) +
                           (spec.string_width ? " of fixed length" : ""));
  }
  return std::unique_ptr<ArrayToBytesCodec>(new VLenCodec(utf8));
}

Result<std::unique_ptr<ArrayToBytesCodec>> MakeUtf8(const json& config, const ChunkSpec& spec) {
  return Make(config, spec, true);
}
Result<std::unique_ptr<ArrayToBytesCodec>> MakeBytes(const json& config, const ChunkSpec& spec) {
  return Make(config, spec, false);
}

}  // namespace

namespace internal {
Status RegisterVLenCodecs(CodecRegistry& registry) {
  ZARRD_RETURN_IF_ERROR(registry.Register({.v3_names = {"vlen-utf8"}, .make = &MakeUtf8}));
  return registry.Register({.v3_names = {"vlen-bytes"}, .make = &MakeBytes});
}
}  // namespace internal

}  // namespace zarrd
