#include "common/metadata/metadata.h"

#include <algorithm>
#include <limits>

#include "common/codec/partial_decoder.h"
#include "common/codec/registry.h"
#include "common/util/checked.h"

namespace zarrd {

using nlohmann::json;

std::vector<int64_t> ArrayMetadata::grid_shape() const {
  std::vector<int64_t> grid(rank());
  for (size_t d = 0; d < rank(); ++d) {
    grid[d] = shape[d] / chunk_shape[d] + (shape[d] % chunk_shape[d] != 0);  // no overflow
  }
  return grid;
}

std::string ArrayMetadata::ChunkKey(const std::vector<int64_t>& chunk_index) const {
  std::string key;
  if (key_encoding.kind == ChunkKeyEncoding::Kind::kDefault) {
    key = "c";
    for (int64_t i : chunk_index) {
      key += key_encoding.separator;
      key += std::to_string(i);
    }
    return key;
  }
  if (chunk_index.empty()) return "0";
  for (size_t d = 0; d < chunk_index.size(); ++d) {
    if (d) key += key_encoding.separator;
    key += std::to_string(chunk_index[d]);
  }
  return key;
}

std::optional<std::vector<int64_t>> ArrayMetadata::ParseChunkKey(std::string_view key) const {
  if (key_encoding.kind == ChunkKeyEncoding::Kind::kDefault) {
    if (key.substr(0, 1) != "c") return std::nullopt;
    key.remove_prefix(1);
    if (rank() == 0) return key.empty() ? std::optional(std::vector<int64_t>{}) : std::nullopt;
  } else if (rank() == 0) {
    return key == "0" ? std::optional(std::vector<int64_t>{}) : std::nullopt;
  }
  std::vector<int64_t> index;
  for (size_t d = 0; d < rank(); ++d) {
    if (key_encoding.kind == ChunkKeyEncoding::Kind::kDefault || d > 0) {
      if (key.empty() || key[0] != key_encoding.separator) return std::nullopt;
      key.remove_prefix(1);
    }
    size_t digits = 0;
    while (digits < key.size() && digits < 18 && key[digits] >= '0' && key[digits] <= '9') ++digits;
    if (digits == 0) return std::nullopt;
    index.push_back(std::stoll(std::string(key.substr(0, digits))));
    key.remove_prefix(digits);
  }
  if (!key.empty()) return std::nullopt;
  return index;
}

uint64_t ArrayMetadata::max_encoded_chunk_bytes() const {
  uint64_t decoded = chunk_spec().num_bytes();
  if (IsStringType(dtype)) {
    const uint64_t n = decoded / ItemSize(dtype);
    decoded = string_width == 0
                  ? kMaxVlenChunkBytes
                  : SaturatingMul(n, string_width * (dtype == DataType::kString ? 4 : 1));
  }
  uint64_t chunks = 1;  // inner chunks when sharded, each with its own headers and index entry
  if (codec_chain) {
    // An astype filter may widen what is stored.
    decoded = std::max<uint64_t>(decoded, codec_chain->ArrayCodecsOutputSize(chunk_spec()));
    if (const PartialDecoder* parts = codec_chain->array_to_bytes().partial_decoder()) {
      chunks = parts->parts_per_chunk();
    }
  }
  return SaturatingAdd(SaturatingMul(decoded, 2),
                       SaturatingAdd(SaturatingMul(chunks, 1024), 1u << 20));
}

Status ArrayMetadata::Finalize() {
  if (shape.size() != chunk_shape.size()) {
    return InvalidArgument("chunk shape has " + std::to_string(chunk_shape.size()) +
                           " dimensions, the array has " + std::to_string(shape.size()));
  }
  for (size_t d = 0; d < rank(); ++d) {
    if (chunk_shape[d] < 1) {
      return InvalidArgument("chunk shape: extents must be positive, got " +
                             std::to_string(chunk_shape[d]));
    }
  }
  ZARRD_RETURN_IF_ERROR(
      CheckedProduct(chunk_shape, ItemSize(dtype), "chunk shape: one chunk", kMaxChunkBytes)
          .status());
  ZARRD_RETURN_IF_ERROR(CheckedProduct(shape, 1, "shape: element count").status());
  ZARRD_RETURN_IF_ERROR(CheckedProduct(shape, ItemSize(dtype), "shape: array size").status());
  ZARRD_RETURN_IF_ERROR(CheckedProduct(grid_shape(), 1, "shape: chunk count").status());
  if (fill_value.size() != ItemSize(dtype)) return Internal("fill value of wrong size");
  if (format == ZarrFormat::kV2) key_encoding.kind = ChunkKeyEncoding::Kind::kV2;
  if (key_encoding.separator == 0) {
    key_encoding.separator = key_encoding.kind == ChunkKeyEncoding::Kind::kV2 ? '.' : '/';
  }
  if (key_encoding.separator != '.' && key_encoding.separator != '/') {
    return InvalidArgument("chunk key separator: must be '/' or '.'");
  }
  if (dimension_names && dimension_names->size() != rank()) {
    return InvalidArgument("dimension_names: has " + std::to_string(dimension_names->size()) +
                           " names for " + std::to_string(rank()) + " dimensions");
  }
  if (format == ZarrFormat::kV3) {
    ZARRD_ASSIGN_OR_RETURN(codec_chain, CodecChain::FromV3Json(codecs, chunk_spec()));
    return OkStatus();
  }
  std::vector<std::unique_ptr<ArrayToArrayCodec>> array_codecs;
  if (v2_order == 'F' && rank() > 1) {
    json order = json::array();
    for (size_t d = rank(); d-- > 0;) order.push_back(d);
    ZARRD_ASSIGN_OR_RETURN(auto transpose, MakeCodec<ArrayToArrayCodec>(
                                               "transpose", {{"order", order}}, chunk_spec()));
    array_codecs.push_back(std::move(transpose));
  }
  // zarr 2 applies filters to the chunk in its memory order (after the F-order transpose).
  // Array->array filters come first: a bytes->bytes filter leaves bytes no later filter reads
  // as an array.
  ChunkSpec current = chunk_spec();
  for (auto& a2a : array_codecs) current = a2a->EncodedSpec(current);
  std::vector<std::unique_ptr<BytesToBytesCodec>> bytes_codecs;
  // numcodecs' object codecs (vlen-utf8, vlen-bytes) are zarrd's array->bytes codec: what
  // follows them works on bytes.
  std::unique_ptr<ArrayToBytesCodec> object_codec;
  for (const json& filter : v2_filters.is_array() ? v2_filters : json::array()) {
    const std::string id = filter.is_object() && filter.contains("id") && filter["id"].is_string()
                               ? filter["id"].get<std::string>()
                               : "";
    if (id == "vlen-utf8" || id == "vlen-bytes") {
      if (object_codec || !bytes_codecs.empty()) {
        return InvalidArgument("filters: " + filter.dump() + " must be the first object codec " +
                               "and come before any bytes->bytes filter");
      }
      ZARRD_ASSIGN_OR_RETURN(object_codec, MakeCodec<ArrayToBytesCodec>(id, filter, current));
      continue;
    }
    ZARRD_ASSIGN_OR_RETURN(AnyCodec codec, CodecRegistry::Builtin().MakeV2Filter(filter, current));
    if (auto* a2a = std::get_if<std::unique_ptr<ArrayToArrayCodec>>(&codec)) {
      if (!bytes_codecs.empty() || object_codec) {
        return InvalidArgument("filters: " + filter.dump() + " (array->array) follows " +
                               (object_codec ? object_codec->ToJson().value("name", "")
                                             : bytes_codecs.back()->ToJson().value("name", "")) +
                               " (a bytes filter), an order zarrd does not read");
      }
      current = (*a2a)->EncodedSpec(current);
      array_codecs.push_back(std::move(*a2a));
    } else if (auto* b2b = std::get_if<std::unique_ptr<BytesToBytesCodec>>(&codec)) {
      bytes_codecs.push_back(std::move(*b2b));
    } else {
      return InvalidArgument("filters: " + filter.dump() + " is not a filter");
    }
  }
  if (IsStringType(current.dtype) && current.string_width == 0 && !object_codec) {
    return InvalidArgument(
        "filters: a \"|O\" array needs the object codec vlen-utf8 or vlen-bytes in its filters "
        "(zarrd reads no other object codec: pickle, json, msgpack2, vlen-array)");
  }
  std::unique_ptr<ArrayToBytesCodec> bytes = std::move(object_codec);
  if (!bytes) {
    json endian = {{"endian", v2_endian == Endian::kBig ? "big" : "little"}};
    ZARRD_ASSIGN_OR_RETURN(bytes, MakeCodec<ArrayToBytesCodec>("bytes", endian, current));
  }
  if (!v2_compressor.is_null()) {
    // numcodecs' shuffle and the object codecs hand the compressor bytes (blosc's typesize 1);
    // fixed-length strings are items of their numpy size.
    const bool items =
        bytes_codecs.empty() && (!IsStringType(current.dtype) || current.string_width);
    const DataType compressed = items ? current.dtype : DataType::kUint8;
    ZARRD_ASSIGN_OR_RETURN(auto compressor,
                           MakeV2Compressor(v2_compressor, compressed, current.string_width));
    bytes_codecs.push_back(std::move(compressor));
  }
  codec_chain = std::make_shared<const CodecChain>(std::move(array_codecs), std::move(bytes),
                                                   std::move(bytes_codecs));
  codecs = codec_chain->ToJson();
  return OkStatus();
}

namespace internal {

Result<std::vector<int64_t>> ParseExtents(const json& j, const std::string& field, bool positive) {
  if (!j.is_array()) return InvalidArgument(field + ": expected a list of integers");
  std::vector<int64_t> out;
  for (const json& v : j) {
    if (!v.is_number_integer() || (positive ? v.get<int64_t>() < 1 : v.get<int64_t>() < 0) ||
        (v.is_number_unsigned() &&
         v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
      return InvalidArgument(field + ": expected " + (positive ? "positive" : "non-negative") +
                             " integers, got " + j.dump());
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

}  // namespace internal
}  // namespace zarrd
