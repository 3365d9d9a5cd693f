// bz2 (numcodecs "bz2", zarr-python 3 "numcodecs.bz2") over libbz2.
#include <bzlib.h>

#include <algorithm>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

class Bz2Codec : public BytesToBytesCodec {
 public:
  explicit Bz2Codec(int level) : level_(level) {}

  Status Encode(ByteView in, Bytes* out) const override {
    unsigned int size = static_cast<unsigned int>(in.size() + in.size() / 100 + 600);
    out->resize(size);
    static char nothing = 0;  // libbz2 refuses a null source, even of length 0
    char* source =
        in.empty() ? &nothing : const_cast<char*>(reinterpret_cast<const char*>(in.data()));
    int rc = BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out->data()), &size, source,
                                      static_cast<unsigned int>(in.size()), level_, 0, 0);
    if (rc != BZ_OK) return Internal("bz2 compress failed (" + std::to_string(rc) + ")");
    out->resize(size);
    return OkStatus();
  }

  Status Decode(ByteView in, Bytes* out, size_t max_size) const override {
    bz_stream bz{};
    if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) return Internal("bz2 init failed");
    bz.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
    bz.avail_in = static_cast<unsigned int>(in.size());
    out->clear();
    int rc = BZ_OK;
    while (rc != BZ_STREAM_END) {
      size_t old = out->size();
      if (old > max_size) break;
      out->resize(std::min(max_size + 1, std::max<size_t>(old * 2, 1 << 16)));
      bz.next_out = reinterpret_cast<char*>(out->data() + old);
      bz.avail_out = static_cast<unsigned int>(out->size() - old);
      rc = BZ2_bzDecompress(&bz);
      out->resize(out->size() - bz.avail_out);
      if (rc != BZ_OK && rc != BZ_STREAM_END) {
        BZ2_bzDecompressEnd(&bz);
        return DataLoss("bz2: corrupt stream (" + std::to_string(rc) + ")");
      }
      if (rc == BZ_OK && bz.avail_in == 0 && bz.avail_out != 0) {
        BZ2_bzDecompressEnd(&bz);
        return DataLoss("bz2: truncated stream");
      }
    }
    BZ2_bzDecompressEnd(&bz);
    if (out->size() > max_size) {
      return DataLoss("bz2: decodes to more than the chunk's " + std::to_string(max_size) +
                      " bytes");
    }
    return OkStatus();
  }

  json ToJson() const override {
    return {{"name", "numcodecs.bz2"}, {"configuration", {{"level", level_}}}};
  }

 private:
  int level_;
};

Result<std::unique_ptr<BytesToBytesCodec>> MakeBz2(const json& config, const ChunkSpec&) {
  int level = 9;
  for (const auto& [key, value] : config.items()) {
    if (key == "level") {
      if (!value.is_number_integer() || value.get<int>() < 1 || value.get<int>() > 9) {
        return internal::ConfigError("bz2", "level", "must be an integer in 1..9");
      }
      level = value.get<int>();
    } else if (key != "id") {
      return internal::ConfigError("bz2", key, "is not a known field");
    }
  }
  return std::unique_ptr<BytesToBytesCodec>(new Bz2Codec(level));
}

}  // namespace

namespace internal {
Status RegisterBz2Codec(CodecRegistry& registry) {
  return registry.Register({.v2_ids = {"bz2"}, .make = &MakeBz2});
}
}  // namespace internal

}  // namespace zarrd
