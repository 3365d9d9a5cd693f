#include "common/codec/sharding.h"

#include <cstring>

#include "common/codec/registry.h"
#include "common/util/checked.h"
#include "common/util/strided_copy.h"

namespace zarrd {

using nlohmann::json;

ShardingCodec::ShardingCodec(std::vector<int64_t> inner_shape, std::vector<int64_t> grid,
                             std::shared_ptr<const CodecChain> inner,
                             std::shared_ptr<const CodecChain> index, IndexLocation location,
                             size_t index_size)
    : inner_shape_(std::move(inner_shape)),
      grid_(std::move(grid)),
      inner_(std::move(inner)),
      index_(std::move(index)),
      location_(location),
      index_size_(index_size) {}

ChunkSpec ShardingCodec::IndexSpec() const {
  std::vector<int64_t> shape = grid_;
  shape.push_back(2);
  return ChunkSpec{DataType::kUint64, shape, FillValue(8, 0)};
}

ChunkSpec ShardingCodec::PartSpec(const ChunkSpec& shard_spec) const {
  return ChunkSpec{shard_spec.dtype, inner_shape_, shard_spec.fill_value, shard_spec.strings,
                   shard_spec.string_width};
}

uint64_t ShardingCodec::parts_per_chunk() const {
  uint64_t parts = 1;
  for (int64_t g : grid_) parts = SaturatingMul(parts, static_cast<uint64_t>(g));
  return parts;
}

PartialDecoder::PartLocation ShardingCodec::Locate(const std::vector<int64_t>& part_index) const {
  PartLocation location{std::vector<int64_t>(grid_.size()), 0};
  for (size_t d = 0; d < grid_.size(); ++d) {
    location.chunk[d] = part_index[d] / grid_[d];
    location.position = location.position * grid_[d] + part_index[d] % grid_[d];
  }
  return location;
}

namespace {

// A shard whose index was read: its inner chunks are read by their ranges.
class ShardParts final : public ChunkParts {
 public:
  ShardParts(ShardIndex index, ChunkRangeReader read)
      : index_(std::move(index)), read_(std::move(read)) {}
  bool empty(size_t position) const override { return index_.empty(position); }
  Status Read(size_t position, Bytes* encoded) const override {
    ZARRD_ASSIGN_OR_RETURN(
        bool found,
        read_(ByteRange::Prefix(index_.offset(position), index_.nbytes(position)), encoded));
    return found ? OkStatus() : DataLoss("shard vanished while read");
  }

 private:
  ShardIndex index_;
  ChunkRangeReader read_;
};

}  // namespace

Result<std::unique_ptr<ChunkParts>> ShardingCodec::Open(ChunkRangeReader read) const {
  const ByteRange index_range = location_ == IndexLocation::kEnd
                                    ? ByteRange::Suffix(index_size_)
                                    : ByteRange::Prefix(0, index_size_);
  Bytes bytes;
  ZARRD_ASSIGN_OR_RETURN(bool found, read(index_range, &bytes));
  if (!found) return std::unique_ptr<ChunkParts>();
  ZARRD_ASSIGN_OR_RETURN(ShardIndex index, DecodeIndex(bytes, std::nullopt));
  return std::unique_ptr<ChunkParts>(new ShardParts(std::move(index), std::move(read)));
}

Result<ShardIndex> ShardingCodec::DecodeIndex(ByteView encoded,
                                              std::optional<uint64_t> shard_size) const {
  ChunkSpec spec = IndexSpec();
  std::vector<uint64_t> entries(static_cast<size_t>(spec.num_elements()));
  Status s = index_->Decode(spec, encoded, reinterpret_cast<uint8_t*>(entries.data()));
  if (!s.ok()) return s.WithContext("shard index");
  ShardIndex index(std::move(entries));
  for (size_t i = 0; i < index.size(); ++i) {
    if (index.empty(i)) continue;
    uint64_t end = index.offset(i) + index.nbytes(i);
    if (end < index.offset(i) || (shard_size && end > *shard_size)) {
      return DataLoss("shard index: inner chunk " + std::to_string(i) + " at [" +
                      std::to_string(index.offset(i)) + ", +" + std::to_string(index.nbytes(i)) +
                      ") lies outside the shard of " +
                      (shard_size ? std::to_string(*shard_size) : std::string("?")) + " bytes");
    }
  }
  return index;
}

namespace {

// Visits every inner chunk in C order: its linear number and its element origin in the shard.
template <typename F>
void ForEachInner(const std::vector<int64_t>& grid, const std::vector<int64_t>& inner, F&& f) {
  const size_t rank = grid.size();
  std::vector<int64_t> pos(rank, 0);
  int64_t total = 1;
  for (int64_t g : grid) total *= g;
  for (int64_t n = 0; n < total; ++n) {
    std::vector<int64_t> origin(rank);
    for (size_t d = 0; d < rank; ++d) origin[d] = pos[d] * inner[d];
    f(static_cast<size_t>(n), origin);
    for (size_t d = rank; d-- > 0;) {
      if (++pos[d] < grid[d]) break;
      pos[d] = 0;
    }
  }
}

int64_t Offset(const std::vector<int64_t>& origin, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < origin.size(); ++d) off += origin[d] * strides[d];
  return off;
}

}  // namespace

Status ShardingCodec::Decode(const ChunkSpec& spec, ByteView in, uint8_t* out) const {
  if (in.size() < index_size_) {
    return DataLoss("shard of " + std::to_string(in.size()) + " bytes is shorter than its " +
                    std::to_string(index_size_) + "-byte index");
  }
  ByteView index_bytes =
      location_ == IndexLocation::kEnd ? in.last(index_size_) : in.first(index_size_);
  ZARRD_ASSIGN_OR_RETURN(ShardIndex index, DecodeIndex(index_bytes, in.size()));
  const ChunkSpec inner_spec = PartSpec(spec);
  const size_t es = ItemSize(spec.dtype);
  const auto shard_strides = COrderStrides(spec.shape, es);
  const auto inner_strides = COrderStrides(inner_shape_, es);
  Bytes decoded(inner_spec.num_bytes());
  Status status;
  ForEachInner(grid_, inner_shape_, [&](size_t n, const std::vector<int64_t>& origin) {
    if (!status.ok()) return;
    uint8_t* dst = out + Offset(origin, shard_strides);
    if (index.empty(n)) {
      StridedFill(dst, shard_strides.data(), inner_shape_.data(), inner_shape_.size(),
                  spec.fill_value.data(), es);
      return;
    }
    ByteView chunk = in.subspan(index.offset(n), index.nbytes(n));
    status = inner_->Decode(inner_spec, chunk, decoded.data());
    if (!status.ok()) {
      status = status.WithContext("inner chunk " + std::to_string(n));
      return;
    }
    StridedCopy(decoded.data(), inner_strides.data(), dst, shard_strides.data(),
                inner_shape_.data(), inner_shape_.size(), es);
  });
  return status;
}

Status ShardingCodec::Encode(const ChunkSpec& spec, const uint8_t* in, Bytes* out) const {
  const ChunkSpec inner_spec = PartSpec(spec);
  const size_t es = ItemSize(spec.dtype);
  const auto shard_strides = COrderStrides(spec.shape, es);
  const auto inner_strides = COrderStrides(inner_shape_, es);
  Bytes inner(inner_spec.num_bytes());
  Bytes data;
  std::vector<uint64_t> entries;
  const uint64_t base = location_ == IndexLocation::kStart ? index_size_ : 0;
  Status status;
  Bytes encoded;
  ForEachInner(grid_, inner_shape_, [&](size_t, const std::vector<int64_t>& origin) {
    if (!status.ok()) return;
    StridedCopy(in + Offset(origin, shard_strides), shard_strides.data(), inner.data(),
                inner_strides.data(), inner_shape_.data(), inner_shape_.size(), es);
    if (AllFill(inner.data(), inner.size() / es, spec.fill_value, spec.dtype)) {
      entries.push_back(ShardIndex::kEmpty);
      entries.push_back(ShardIndex::kEmpty);
      return;
    }
    status = inner_->Encode(inner_spec, inner.data(), &encoded);
    entries.push_back(base + data.size());
    entries.push_back(encoded.size());
    data.insert(data.end(), encoded.begin(), encoded.end());
  });
  ZARRD_RETURN_IF_ERROR(status);
  Bytes index;
  ZARRD_RETURN_IF_ERROR(
      index_->Encode(IndexSpec(), reinterpret_cast<const uint8_t*>(entries.data()), &index));
  if (location_ == IndexLocation::kStart) {
    index.insert(index.end(), data.begin(), data.end());
    *out = std::move(index);
  } else {
    data.insert(data.end(), index.begin(), index.end());
    *out = std::move(data);
  }
  return OkStatus();
}

json ShardingCodec::ToJson() const {
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", inner_shape_},
            {"codecs", inner_->ToJson()},
            {"index_codecs", index_->ToJson()},
            {"index_location", location_ == IndexLocation::kEnd ? "end" : "start"}}}};
}

namespace {
Result<std::unique_ptr<ArrayToBytesCodec>> MakeSharding(const json& config,
                                                        const ChunkSpec& shard_spec) {
  auto err = [](const std::string& field, const std::string& why) {
    return internal::ConfigError("sharding_indexed", field, why);
  };
  for (const auto& [key, value] : config.items()) {
    if (key != "chunk_shape" && key != "codecs" && key != "index_codecs" &&
        key != "index_location") {
      return err(key, "is not a known field");
    }
  }
  if (!config.contains("chunk_shape") || !config["chunk_shape"].is_array()) {
    return err("chunk_shape", "is required (a list of integers)");
  }
  const size_t rank = shard_spec.shape.size();
  std::vector<int64_t> inner_shape, grid;
  for (const json& v : config["chunk_shape"]) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      return err("chunk_shape", "must hold positive integers, got " + config["chunk_shape"].dump());
    }
    inner_shape.push_back(v.get<int64_t>());
  }
  if (inner_shape.size() != rank) {
    return err("chunk_shape", "has " + std::to_string(inner_shape.size()) + " dimensions, the " +
                                  "shard has " + std::to_string(rank));
  }
  for (size_t d = 0; d < rank; ++d) {
    if (shard_spec.shape[d] % inner_shape[d] != 0) {
      return err("chunk_shape", config["chunk_shape"].dump() + " does not divide the shard shape");
    }
    grid.push_back(shard_spec.shape[d] / inner_shape[d]);
  }
  auto location = ShardingCodec::IndexLocation::kEnd;
  if (config.contains("index_location")) {
    const json& l = config["index_location"];
    if (l == "start") {
      location = ShardingCodec::IndexLocation::kStart;
    } else if (l != "end") {
      return err("index_location", "must be \"start\" or \"end\", got " + l.dump());
    }
  }
  if (!config.contains("codecs")) return err("codecs", "is required");
  ChunkSpec inner_spec{shard_spec.dtype, inner_shape, shard_spec.fill_value};
  auto inner = CodecChain::FromV3Json(config["codecs"], inner_spec);
  if (!inner.ok()) return inner.status().WithContext("sharding_indexed inner codecs");
  json index_json =
      config.contains("index_codecs")
          ? config["index_codecs"]
          : json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                         {{"name", "crc32c"}}});
  std::vector<int64_t> index_shape = grid;
  index_shape.push_back(2);
  ChunkSpec index_spec{DataType::kUint64, index_shape, FillValue(8, 0)};
  auto index = CodecChain::FromV3Json(index_json, index_spec);
  if (!index.ok()) return index.status().WithContext("sharding_indexed index_codecs");
  auto index_size = (*index)->EncodedSize(index_spec);
  if (!index_size) return err("index_codecs", "must have a fixed encoded size (bytes, crc32c)");
  return std::unique_ptr<ArrayToBytesCodec>(new ShardingCodec(
      std::move(inner_shape), std::move(grid), *inner, *index, location, *index_size));
}

}  // namespace

namespace internal {
Status RegisterShardingCodec(CodecRegistry& registry) {
  return registry.Register({.v3_names = {"sharding_indexed"}, .make = &MakeSharding});
}
}  // namespace internal

}  // namespace zarrd
