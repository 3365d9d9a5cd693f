// The codec pipeline of Zarr v3: array->array codecs, one array->bytes codec, bytes->bytes
// codecs. Zarr v2 compressors and orders are expressed as the same pipeline. The codecs
// themselves are found through common/codec/registry.h.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/dtype/dtype.h"
#include "common/dtype/fill_value.h"
#include "common/dtype/string_arena.h"
#include "common/util/bytes.h"
#include "common/util/status.h"

namespace zarrd {

// What a codec is decoding or encoding: one chunk of `shape` elements of `dtype`.
struct ChunkSpec {
  DataType dtype;
  std::vector<int64_t> shape;
  FillValue fill_value;
  // String types: where decoding puts strings (the request's; null refuses to decode them), and
  // the length of v2 "|S<n>" / "<U<n>" elements (0: variable-length).
  StringArena* strings = nullptr;
  size_t string_width = 0;

  int64_t num_elements() const;
  size_t num_bytes() const { return static_cast<size_t>(num_elements()) * ItemSize(dtype); }
};

class PartialDecoder;

// Decoded chunks are C-order, little-endian arrays.
class ArrayToArrayCodec {
 public:
  virtual ~ArrayToArrayCodec() = default;
  virtual std::vector<int64_t> EncodedShape(const std::vector<int64_t>& shape) const {
    return shape;
  }
  // The element type of the encoded chunk (numcodecs' `astype`).
  virtual DataType EncodedDtype(DataType decoded) const { return decoded; }
  // `in` holds `spec`; `out` gets EncodedSpec(spec).num_bytes().
  virtual void Encode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const = 0;
  // `in` holds EncodedSpec(spec); `out` gets spec.num_bytes().
  virtual void Decode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const = 0;
  virtual nlohmann::json ToJson() const = 0;
  // A transpose's order (encoded dimension i is decoded dimension order[i]); empty for codecs
  // that do more than permute dimensions.
  virtual std::vector<size_t> DimensionOrder() const { return {}; }
  // The chunks this codec writes for chunks of `spec`: encoded shape and dtype, and the fill
  // value encoded when the dtype changes.
  ChunkSpec EncodedSpec(const ChunkSpec& spec) const;
};

// A variable-length string chunk decodes to at most this many bytes (before its strings are
// counted): what a chunk of huge strings may hold, and a bound on what a hostile one allocates.
inline constexpr uint64_t kMaxVlenChunkBytes = uint64_t{1} << 31;

class ArrayToBytesCodec {
 public:
  virtual ~ArrayToBytesCodec() = default;
  virtual Status Encode(const ChunkSpec& spec, const uint8_t* in, Bytes* out) const = 0;
  // Fills `out` (spec.num_bytes()) from `in`.
  virtual Status Decode(const ChunkSpec& spec, ByteView in, uint8_t* out) const = 0;
  virtual nlohmann::json ToJson() const = 0;
  // True when the encoded bytes are the decoded ones (bytes codec, little-endian).
  virtual bool IsIdentity(const ChunkSpec& spec) const { return false; }
  // The encoded size, where it depends on the spec alone (not for variable-length strings).
  virtual std::optional<size_t> EncodedSize(const ChunkSpec& spec) const { return std::nullopt; }
  // The bytes codec's byte order; nullopt for the other array->bytes codecs (sharding).
  virtual std::optional<Endian> byte_order() const { return std::nullopt; }
  // Codecs whose chunks are read in parts (common/codec/partial_decoder.h), else nullptr.
  virtual const PartialDecoder* partial_decoder() const { return nullptr; }
};

// Bytes->bytes codecs that the GPU decoders (common/decode, common/cuda) also decode or check.
// kDeflate is gzip and zlib, which decode either wrapper; kCrc32c the checksum after a compressor.
enum class CompressorFamily : uint8_t { kOther, kZstd, kBlosc, kDeflate, kCrc32c };

class BytesToBytesCodec {
 public:
  virtual ~BytesToBytesCodec() = default;
  virtual Status Encode(ByteView in, Bytes* out) const = 0;
  // Decodes into a buffer of unknown size, refusing output beyond `max_size`.
  virtual Status Decode(ByteView in, Bytes* out, size_t max_size) const = 0;
  // Decodes into `out`, whose size is the exact decoded size.
  virtual Status DecodeInto(ByteView in, MutableByteView out) const;
  // The encoded size for a decoded size, for codecs that know it (checksums).
  virtual std::optional<size_t> EncodedSize(size_t decoded_size) const { return std::nullopt; }
  virtual nlohmann::json ToJson() const = 0;
  virtual CompressorFamily family() const { return CompressorFamily::kOther; }
};

// A whole pipeline, built from v3 `codecs` JSON or from v2 metadata.
class CodecChain {
 public:
  static Result<std::shared_ptr<const CodecChain>> FromV3Json(const nlohmann::json& codecs,
                                                              const ChunkSpec& spec);
  CodecChain(std::vector<std::unique_ptr<ArrayToArrayCodec>> array_codecs,
             std::unique_ptr<ArrayToBytesCodec> array_to_bytes,
             std::vector<std::unique_ptr<BytesToBytesCodec>> bytes_codecs);

  Status Encode(const ChunkSpec& spec, const uint8_t* in, Bytes* out) const;
  // `out` holds spec.num_bytes(); errors carry no chunk name (callers add it).
  Status Decode(const ChunkSpec& spec, ByteView in, uint8_t* out) const;
  nlohmann::json ToJson() const;
  std::optional<size_t> EncodedSize(const ChunkSpec& spec) const;
  // The bytes of a chunk of `spec` after the array->array codecs (which may change its type).
  size_t ArrayCodecsOutputSize(const ChunkSpec& spec) const;

  const ArrayToBytesCodec& array_to_bytes() const { return *array_to_bytes_; }
  // The array->bytes codec's partial decoder when no other codec transforms what it stores.
  const PartialDecoder* partial_decoder() const;
  bool has_array_codecs() const { return !array_codecs_.empty(); }
  std::span<const std::unique_ptr<ArrayToArrayCodec>> array_codecs() const { return array_codecs_; }
  bool has_bytes_codecs() const { return !bytes_codecs_.empty(); }
  std::span<const std::unique_ptr<BytesToBytesCodec>> bytes_codecs() const { return bytes_codecs_; }

 private:
  std::vector<std::unique_ptr<ArrayToArrayCodec>> array_codecs_;
  std::unique_ptr<ArrayToBytesCodec> array_to_bytes_;
  std::vector<std::unique_ptr<BytesToBytesCodec>> bytes_codecs_;
};

uint32_t Crc32c(ByteView data, uint32_t crc = 0);

namespace internal {
// Reads config[key] as T with an error naming codec and field.
Status ConfigError(const std::string& codec, const std::string& field, const std::string& why);
}  // namespace internal

}  // namespace zarrd
