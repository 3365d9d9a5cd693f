// numcodecs' shuffle filter (bytes->bytes): byte b of element i moves to b * count + i, so the
// first bytes of all elements come first. An elementsize of 0 or 1 copies.
#include <cstring>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

class ShuffleCodec : public BytesToBytesCodec {
 public:
  explicit ShuffleCodec(size_t elementsize) : elementsize_(elementsize) {}

  Status Encode(ByteView in, Bytes* out) const override {
    ZARRD_RETURN_IF_ERROR(CheckSize(in.size()));
    out->resize(in.size());
    Permute(in, out->data(), true);
    return OkStatus();
  }

  Status Decode(ByteView in, Bytes* out, size_t max_size) const override {
    if (in.size() > max_size) return DataLoss("shuffle: larger than the chunk");
    ZARRD_RETURN_IF_ERROR(CheckSize(in.size()));
    out->resize(in.size());
    Permute(in, out->data(), false);
    return OkStatus();
  }

  Status DecodeInto(ByteView in, MutableByteView out) const override {
    if (in.size() != out.size()) {
      return DataLoss("shuffle: " + std::to_string(in.size()) + " bytes, expected " +
                      std::to_string(out.size()));
    }
    ZARRD_RETURN_IF_ERROR(CheckSize(in.size()));
    Permute(in, out.data(), false);
    return OkStatus();
  }

  std::optional<size_t> EncodedSize(size_t decoded_size) const override { return decoded_size; }

  json ToJson() const override {
    return {{"name", "numcodecs.shuffle"}, {"configuration", {{"elementsize", elementsize_}}}};
  }

 private:
  Status CheckSize(size_t n) const {
    if (elementsize_ > 1 && n % elementsize_ != 0) {
      return DataLoss("shuffle: " + std::to_string(n) + " bytes are no whole number of " +
                      std::to_string(elementsize_) + "-byte elements");
    }
    return OkStatus();
  }

  void Permute(ByteView in, uint8_t* out, bool shuffle) const {
    if (in.empty()) return;
    if (elementsize_ <= 1) {
      std::memcpy(out, in.data(), in.size());
      return;
    }
    const size_t count = in.size() / elementsize_;
    for (size_t i = 0; i < count; ++i) {
      for (size_t b = 0; b < elementsize_; ++b) {
        const size_t element = i * elementsize_ + b, plane = b * count + i;
        if (shuffle) {
          out[plane] = in[element];
        } else {
          out[element] = in[plane];
        }
      }
    }
  }

  size_t elementsize_;
};

// numcodecs' Shuffle defaults to 4-byte elements; numcodecs.zarr3's to the data type's size.
// Only v2 (numcodecs) JSON carries an "id".
Result<std::unique_ptr<BytesToBytesCodec>> MakeShuffle(const json& config, const ChunkSpec& spec) {
  size_t elementsize = config.contains("id") ? 4 : ItemSize(spec.dtype);
  if (config.contains("elementsize") && !config["elementsize"].is_null()) {
    const json& e = config["elementsize"];
    if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > (1 << 20)) {
      return internal::ConfigError("shuffle", "elementsize", "must be an integer from 0 to 2^20");
    }
    elementsize = e.get<size_t>();
  }
  return std::unique_ptr<BytesToBytesCodec>(new ShuffleCodec(elementsize));
}

}  // namespace

namespace internal {
Status RegisterShuffleCodec(CodecRegistry& registry) {
  return registry.Register({.v2_ids = {"shuffle"}, .make = &MakeShuffle});
}
}  // namespace internal

}  // namespace zarrd
