// gzip (Zarr v3 "gzip", numcodecs "gzip") and zlib (numcodecs "zlib") over zlib's deflate.
#include <zlib.h>

#include <algorithm>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

enum class Wrapper { kGzip, kZlib };

class DeflateCodec : public BytesToBytesCodec {
 public:
  DeflateCodec(Wrapper wrapper, int level) : wrapper_(wrapper), level_(level) {}

  Status Encode(ByteView in, Bytes* out) const override {
    z_stream zs{};
    int window = wrapper_ == Wrapper::kGzip ? 15 + 16 : 15;
    if (deflateInit2(&zs, level_, Z_DEFLATED, window, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return Internal("deflateInit2 failed");
    }
    out->resize(deflateBound(&zs, in.size()) + 32);
    zs.next_in = const_cast<Bytef*>(in.data());
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = out->data();
    zs.avail_out = static_cast<uInt>(out->size());
    int rc = deflate(&zs, Z_FINISH);
    size_t produced = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) return Internal("deflate did not finish");
    out->resize(produced);
    return OkStatus();
  }

  Status Decode(ByteView in, Bytes* out, size_t max_size) const override {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 32) != Z_OK) return Internal("inflateInit2 failed");  // gzip|zlib
    zs.next_in = const_cast<Bytef*>(in.data());
    zs.avail_in = static_cast<uInt>(in.size());
    out->clear();
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      size_t old = out->size();
      if (old > max_size) break;
      out->resize(std::min(max_size + 1, std::max<size_t>(old * 2, 1 << 16)));
      zs.next_out = out->data() + old;
      zs.avail_out = static_cast<uInt>(out->size() - old);
      rc = inflate(&zs, Z_NO_FLUSH);
      out->resize(old + (out->size() - old - zs.avail_out));
      if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
        inflateEnd(&zs);
        return DataLoss("deflate: truncated stream");
      }
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        std::string msg = zs.msg ? zs.msg : "corrupt stream";
        inflateEnd(&zs);
        return DataLoss("deflate: " + msg);
      }
    }
    inflateEnd(&zs);
    if (out->size() > max_size) {
      return DataLoss("deflate: decodes to more than the chunk's " + std::to_string(max_size) +
                      " bytes");
    }
    return OkStatus();
  }

  CompressorFamily family() const override { return CompressorFamily::kDeflate; }

  json ToJson() const override {
    return {{"name", wrapper_ == Wrapper::kGzip ? "gzip" : "numcodecs.zlib"},
            {"configuration", {{"level", level_}}}};
  }

 private:
  Wrapper wrapper_;
  int level_;
};

Result<std::unique_ptr<BytesToBytesCodec>> MakeDeflate(const json& config, Wrapper wrapper) {
  const char* name = wrapper == Wrapper::kGzip ? "gzip" : "zlib";
  int level = wrapper == Wrapper::kGzip ? 5 : 1;
  for (const auto& [key, value] : config.items()) {
    if (key == "level") {
      if (!value.is_number_integer() || value.get<int>() < -1 || value.get<int>() > 9) {
        return internal::ConfigError(name, "level", "must be an integer in -1..9");
      }
      level = value.get<int>();
    } else if (key != "id") {
      return internal::ConfigError(name, key, "is not a known field");
    }
  }
  return std::unique_ptr<BytesToBytesCodec>(new DeflateCodec(wrapper, level));
}

Result<std::unique_ptr<BytesToBytesCodec>> MakeGzip(const json& config, const ChunkSpec&) {
  return MakeDeflate(config, Wrapper::kGzip);
}
// zlib's own format (numcodecs "zlib"); decodes gzip too.
Result<std::unique_ptr<BytesToBytesCodec>> MakeZlib(const json& config, const ChunkSpec&) {
  return MakeDeflate(config, Wrapper::kZlib);
}

}  // namespace

namespace internal {
Status RegisterGzipCodecs(CodecRegistry& registry) {
  ZARRD_RETURN_IF_ERROR(registry.Register(
      {.v3_names = {"gzip"}, .v2_ids = {"gzip"}, .make = &MakeGzip, .device_decode = true}));
  return registry.Register({.v2_ids = {"zlib"}, .make = &MakeZlib, .device_decode = true});
}
}  // namespace internal

}  // namespace zarrd
