// Array and group metadata of Zarr v3 (zarr.json) and v2 (.zarray, .zgroup, .zattrs).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/codec/codec.h"
#include "common/dtype/dtype.h"
#include "common/dtype/fill_value.h"
#include "common/util/status.h"

namespace zarrd {

struct ChunkKeyEncoding {
  enum class Kind { kDefault, kV2 };
  Kind kind = Kind::kDefault;
  char separator = 0;  // 0: the encoding's default ('/' for default, '.' for v2)
};

struct ArrayMetadata {
  ZarrFormat format = ZarrFormat::kV3;
  std::vector<int64_t> shape;
  std::vector<int64_t> chunk_shape;
  DataType dtype = DataType::kFloat64;
  TimeUnit time_unit;  // datetime64/timedelta64 only
  // String types in v2: the length of "|S<n>" (bytes) and "<U<n>" (code points) elements; 0 for
  // variable-length strings ("|O", v3 "string" and "bytes").
  size_t string_width = 0;
  FillValue fill_value;
  ChunkKeyEncoding key_encoding;
  // v3: the "codecs" list as written. v2: built from order, filters, dtype endianness and
  // compressor.
  nlohmann::json codecs = nlohmann::json::array();
  std::optional<std::vector<std::optional<std::string>>> dimension_names;
  nlohmann::json attributes = nlohmann::json::object();
  // v2 only.
  Endian v2_endian = Endian::kLittle;
  char v2_order = 'C';
  nlohmann::json v2_compressor;     // null or numcodecs JSON
  nlohmann::json v2_filters;        // null or a non-empty list of numcodecs JSON
  bool v2_fill_value_null = false;  // "fill_value": null (read as zeros, written back as null)

  // Built by Finalize(): the pipeline that encodes and decodes one chunk.
  std::shared_ptr<const CodecChain> codec_chain;

  size_t rank() const { return shape.size(); }
  // The numpy typestr of values as results carry them (little-endian): "<f4", "<M8[10ms]",
  // "|O" (variable-length strings), "|S5", "<U3".
  std::string result_typestr() const {
    return V2Typestr(dtype, Endian::kLittle, time_unit, string_width);
  }
  ChunkSpec chunk_spec() const {
    return ChunkSpec{dtype, chunk_shape, fill_value, nullptr, string_width};
  }
  // Chunks per dimension (the last may be partial).
  std::vector<int64_t> grid_shape() const;
  // The store key of a chunk, relative to the array's path.
  std::string ChunkKey(const std::vector<int64_t>& chunk_index) const;
  // The inverse of ChunkKey: the chunk index a key names, nullopt for other keys.
  std::optional<std::vector<int64_t>> ParseChunkKey(std::string_view key) const;
  // The most bytes a stored chunk (a whole shard when sharded) may hold: its decoded size (or
  // the size an astype filter widens it to) twice (no compressor expands that much) plus room
  // for per-chunk headers and a shard index. A larger value is DATA_LOSS before it is read.
  uint64_t max_encoded_chunk_bytes() const;
  // Validates shapes and builds `codec_chain`.
  Status Finalize();
};

Result<ArrayMetadata> ParseV3ArrayMetadata(const nlohmann::json& json);
nlohmann::json ToV3Json(const ArrayMetadata& metadata);

Result<ArrayMetadata> ParseV2ArrayMetadata(const nlohmann::json& zarray,
                                           const nlohmann::json& zattrs);
// The .zarray document; attributes go to .zattrs.
nlohmann::json ToV2Json(const ArrayMetadata& metadata);

struct GroupMetadata {
  ZarrFormat format = ZarrFormat::kV3;
  nlohmann::json attributes = nlohmann::json::object();
  // v3: the "consolidated_metadata" field as stored (common/metadata/consolidated.h), null when
  // absent.
  nlohmann::json consolidated_metadata;
};

Result<GroupMetadata> ParseV3GroupMetadata(const nlohmann::json& json);
nlohmann::json ToV3Json(const GroupMetadata& metadata);

namespace internal {
Result<std::vector<int64_t>> ParseExtents(const nlohmann::json& j, const std::string& field,
                                          bool positive);
}  // namespace internal

// Decoded chunks larger than this are refused, so corrupt metadata cannot ask for absurd buffers.
inline constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 34;

}  // namespace zarrd
