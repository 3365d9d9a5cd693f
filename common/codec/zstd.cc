#include <zstd.h>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

// One context of each kind per thread: creating them costs more than a small chunk's decode.
ZSTD_DCtx* ThreadDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(),
                                                                      ZSTD_freeDCtx);
  return ctx.get();
}
ZSTD_CCtx* ThreadCCtx() {
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(),
                                                                      ZSTD_freeCCtx);
  return ctx.get();
}

Status ZstdError(const char* what, size_t code) {
  return DataLoss(std::string("zstd ") + what + ": " + ZSTD_getErrorName(code));
}

class ZstdCodec : public BytesToBytesCodec {
 public:
  ZstdCodec(int level, bool checksum) : level_(level), checksum_(checksum) {}

  Status Encode(ByteView in, Bytes* out) const override {
    ZSTD_CCtx* ctx = ThreadCCtx();
    ZSTD_CCtx_reset(ctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, level_);
    ZSTD_CCtx_setParameter(ctx, ZSTD_c_checksumFlag, checksum_ ? 1 : 0);
    out->resize(ZSTD_compressBound(in.size()));
    size_t n = ZSTD_compress2(ctx, out->data(), out->size(), in.data(), in.size());
    if (ZSTD_isError(n)) return Internal(std::string("zstd compress: ") + ZSTD_getErrorName(n));
    out->resize(n);
    return OkStatus();
  }

  Status DecodeInto(ByteView in, MutableByteView out) const override {
    unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR) return DataLoss("zstd: not a zstd frame");
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != out.size()) {
      return DataLoss("zstd: frame declares " + std::to_string(declared) + " bytes, expected " +
                      std::to_string(out.size()));
    }
    if (declared == ZSTD_CONTENTSIZE_UNKNOWN) return BytesToBytesCodec::DecodeInto(in, out);
    size_t n = ZSTD_decompressDCtx(ThreadDCtx(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) return ZstdError("decompress", n);
    if (n != out.size()) {
      return DataLoss("zstd: decoded " + std::to_string(n) + " bytes, expected " +
                      std::to_string(out.size()));
    }
    return OkStatus();
  }

  Status Decode(ByteView in, Bytes* out, size_t max_size) const override {
    unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR) return DataLoss("zstd: not a zstd frame");
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN) {
      if (declared > max_size) {
        return DataLoss("zstd: frame declares " + std::to_string(declared) +
                        " bytes, more than the chunk's " + std::to_string(max_size));
      }
      out->resize(declared);
      return DecodeInto(in, *out);
    }
    // Frames without a content size (streaming writers): decode in steps, bounded.
    ZSTD_DCtx* ctx = ThreadDCtx();
    ZSTD_DCtx_reset(ctx, ZSTD_reset_session_only);
    out->clear();
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    size_t ret = 1;
    while (input.pos < input.size || ret != 0) {
      size_t old = out->size();
      if (old >= max_size + 1) {
        return DataLoss("zstd: decodes to more than the chunk's " + std::to_string(max_size) +
                        " bytes");
      }
      out->resize(std::min(max_size + 1, std::max<size_t>(old * 2, 1 << 16)));
      ZSTD_outBuffer output{out->data() + old, out->size() - old, 0};
      ret = ZSTD_decompressStream(ctx, &output, &input);
      if (ZSTD_isError(ret)) return ZstdError("decompress", ret);
      out->resize(old + output.pos);
      if (ret != 0 && input.pos == input.size && output.pos == 0) {
        return DataLoss("zstd: truncated frame");
      }
    }
    if (out->size() > max_size) {
      return DataLoss("zstd: decodes to more than the chunk's " + std::to_string(max_size) +
                      " bytes");
    }
    return OkStatus();
  }

  CompressorFamily family() const override { return CompressorFamily::kZstd; }

  json ToJson() const override {
    return {{"name", "zstd"}, {"configuration", {{"level", level_}, {"checksum", checksum_}}}};
  }

 private:
  int level_;
  bool checksum_;
};

Result<std::unique_ptr<BytesToBytesCodec>> MakeZstd(const json& config, const ChunkSpec&) {
  int level = 0;
  bool checksum = false;
  for (const auto& [key, value] : config.items()) {
    if (key == "level") {
      if (!value.is_number_integer()) {
        return internal::ConfigError("zstd", "level", "must be an integer");
      }
      // Out-of-range levels are clamped by zstd, as numcodecs relies on.
      level = value.get<int>();
    } else if (key == "checksum") {
      if (!value.is_boolean()) return internal::ConfigError("zstd", "checksum", "must be a bool");
      checksum = value.get<bool>();
    } else if (key != "id") {
      return internal::ConfigError("zstd", key, "is not a known field");
    }
  }
  return std::unique_ptr<BytesToBytesCodec>(new ZstdCodec(level, checksum));
}

}  // namespace

namespace internal {
Status RegisterZstdCodec(CodecRegistry& registry) {
  return registry.Register(
      {.v3_names = {"zstd"}, .v2_ids = {"zstd"}, .make = &MakeZstd, .device_decode = true});
}
}  // namespace internal

}  // namespace zarrd
