#include <blosc.h>

#include <string>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

constexpr const char* kShuffleNames[] = {"noshuffle", "shuffle", "bitshuffle"};

class BloscCodec : public BytesToBytesCodec {
 public:
  BloscCodec(std::string cname, int clevel, int shuffle, size_t typesize, size_t blocksize)
      : cname_(std::move(cname)),
        clevel_(clevel),
        shuffle_(shuffle),
        typesize_(typesize),
        blocksize_(blocksize) {}

  Status Encode(ByteView in, Bytes* out) const override {
    out->resize(in.size() + BLOSC_MAX_OVERHEAD);
    int n = blosc_compress_ctx(clevel_, shuffle_, typesize_, in.size(), in.data(), out->data(),
                               out->size(), cname_.c_str(), blocksize_, 1);
    if (n <= 0) return Internal("blosc compress failed (" + std::to_string(n) + ")");
    out->resize(static_cast<size_t>(n));
    return OkStatus();
  }

  Status Decode(ByteView in, Bytes* out, size_t max_size) const override {
    ZARRD_ASSIGN_OR_RETURN(size_t nbytes, DecodedSize(in));
    if (nbytes > max_size) {
      return DataLoss("blosc: header declares " + std::to_string(nbytes) +
                      " bytes, more than the chunk's " + std::to_string(max_size));
    }
    out->resize(nbytes);
    return Decompress(in, *out);
  }

  Status DecodeInto(ByteView in, MutableByteView out) const override {
    ZARRD_ASSIGN_OR_RETURN(size_t nbytes, DecodedSize(in));
    if (nbytes != out.size()) {
      return DataLoss("blosc: header declares " + std::to_string(nbytes) + " bytes, expected " +
                      std::to_string(out.size()));
    }
    return Decompress(in, out);
  }

  CompressorFamily family() const override { return CompressorFamily::kBlosc; }

  json ToJson() const override {
    return {{"name", "blosc"},
            {"configuration",
             {{"cname", cname_},
              {"clevel", clevel_},
              {"shuffle", kShuffleNames[shuffle_]},
              {"typesize", typesize_},
              {"blocksize", blocksize_}}}};
  }

 private:
  static Result<size_t> DecodedSize(ByteView in) {
    size_t nbytes = 0;
    if (in.size() < BLOSC_MIN_HEADER_LENGTH ||
        blosc_cbuffer_validate(in.data(), in.size(), &nbytes) < 0) {
      return DataLoss("blosc: invalid or truncated header");
    }
    return nbytes;
  }

  static Status Decompress(ByteView in, MutableByteView out) {
    int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
    if (n < 0 || static_cast<size_t>(n) != out.size()) {
      return DataLoss("blosc: corrupt data (decompress returned " + std::to_string(n) + ")");
    }
    return OkStatus();
  }

  std::string cname_;
  int clevel_;
  int shuffle_;
  size_t typesize_;
  size_t blocksize_;
};

Status CheckCname(const std::string& cname) {
  if (blosc_compname_to_compcode(cname.c_str()) < 0) {
    return internal::ConfigError(
        "blosc", "cname",
        "\"" + cname + "\" is not in this libblosc (it has " + blosc_list_compressors() + ")");
  }
  return OkStatus();
}

Result<std::unique_ptr<BytesToBytesCodec>> Make(const json& config, DataType dtype,
                                                size_t string_width, bool v2) {
  std::string cname = "lz4";
  int clevel = 5;
  int shuffle = v2 ? -1 : 0;
  // Strings: numpy's item size for fixed-length ones, else the bytes of the vlen layout.
  size_t typesize = !IsStringType(dtype)         ? ItemSize(dtype)
                    : dtype == DataType::kString ? 4 * string_width
                                                 : string_width;
  if (typesize == 0) typesize = 1;
  size_t blocksize = 0;
  for (const auto& [key, value] : config.items()) {
    if (key == "cname") {
      if (!value.is_string()) return internal::ConfigError("blosc", "cname", "must be a string");
      cname = value.get<std::string>();
    } else if (key == "clevel") {
      if (!value.is_number_integer() || value.get<int>() < 0 || value.get<int>() > 9) {
        return internal::ConfigError("blosc", "clevel", "must be an integer in 0..9");
      }
      clevel = value.get<int>();
    } else if (key == "shuffle") {
      if (value.is_number_integer() && value.get<int>() >= -1 && value.get<int>() <= 2) {
        shuffle = value.get<int>();
      } else if (value.is_string()) {
        shuffle = -2;
        for (int i = 0; i < 3; ++i) {
          if (value == kShuffleNames[i]) shuffle = i;
        }
        if (shuffle == -2) {
          return internal::ConfigError("blosc", "shuffle",
                                       "must be noshuffle, shuffle or bitshuffle");
        }
      } else {
        return internal::ConfigError("blosc", "shuffle", "is not valid: " + value.dump());
      }
    } else if (key == "typesize") {
      if (!value.is_number_unsigned() || value.get<size_t>() < 1 || value.get<size_t>() > 255) {
        return internal::ConfigError("blosc", "typesize", "must be an integer in 1..255");
      }
      typesize = value.get<size_t>();
    } else if (key == "blocksize") {
      if (!value.is_number_unsigned()) {
        return internal::ConfigError("blosc", "blocksize", "must be a non-negative integer");
      }
      blocksize = value.get<size_t>();
    } else if (key != "id") {
      return internal::ConfigError("blosc", key, "is not a known field");
    }
  }
  ZARRD_RETURN_IF_ERROR(CheckCname(cname));
  if (shuffle == -1) shuffle = typesize == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;  // numcodecs AUTO
  return std::unique_ptr<BytesToBytesCodec>(
      new BloscCodec(std::move(cname), clevel, shuffle, typesize, blocksize));
}

Result<std::unique_ptr<BytesToBytesCodec>> MakeBloscV3(const json& config, const ChunkSpec& spec) {
  return Make(config, spec.dtype, spec.string_width, /*v2=*/false);
}
Result<std::unique_ptr<BytesToBytesCodec>> MakeNumcodecs(const json& config,
                                                         const ChunkSpec& spec) {
  return Make(config, spec.dtype, spec.string_width, /*v2=*/true);
}

}  // namespace

namespace internal {
Status RegisterBloscCodec(CodecRegistry& registry) {
  return registry.Register({.v3_names = {"blosc"},
                            .v2_ids = {"blosc"},
                            .make = &MakeBloscV3,
                            .make_numcodecs = &MakeNumcodecs,
                            .device_decode = true});
}
}  // namespace internal

}  // namespace zarrd
