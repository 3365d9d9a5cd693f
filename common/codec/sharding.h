// sharding_indexed: a shard holds a grid of inner chunks and an index of (offset, nbytes) pairs.
// Its partial decoder reads a shard's index once and then single inner chunks by range.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/codec/codec.h"
#include "common/codec/partial_decoder.h"

namespace zarrd {

class ShardIndex {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  explicit ShardIndex(std::vector<uint64_t> entries) : entries_(std::move(entries)) {}
  size_t size() const { return entries_.size() / 2; }
  bool empty(size_t i) const { return entries_[2 * i] == kEmpty && entries_[2 * i + 1] == kEmpty; }
  uint64_t offset(size_t i) const { return entries_[2 * i]; }
  uint64_t nbytes(size_t i) const { return entries_[2 * i + 1]; }

 private:
  std::vector<uint64_t> entries_;
};

class ShardingCodec : public ArrayToBytesCodec, public PartialDecoder {
 public:
  enum class IndexLocation { kStart, kEnd };

  ShardingCodec(std::vector<int64_t> inner_shape, std::vector<int64_t> grid,
                std::shared_ptr<const CodecChain> inner, std::shared_ptr<const CodecChain> index,
                IndexLocation location, size_t index_size);

  Status Encode(const ChunkSpec& spec, const uint8_t* in, Bytes* out) const override;
  Status Decode(const ChunkSpec& spec, ByteView in, uint8_t* out) const override;
  nlohmann::json ToJson() const override;
  const PartialDecoder* partial_decoder() const override { return this; }

  // Parts are the inner chunks.
  const std::vector<int64_t>& part_shape() const override { return inner_shape_; }
  uint64_t parts_per_chunk() const override;
  PartLocation Locate(const std::vector<int64_t>& part_index) const override;
  ChunkSpec PartSpec(const ChunkSpec& shard_spec) const override;
  const CodecChain& part_codecs() const override { return *inner_; }
  Result<std::unique_ptr<ChunkParts>> Open(ChunkRangeReader read) const override;

  size_t index_size() const { return index_size_; }
  // Decodes and checks the index; `shard_size`, when known, bounds every entry.
  Result<ShardIndex> DecodeIndex(ByteView encoded, std::optional<uint64_t> shard_size) const;

 private:
  ChunkSpec IndexSpec() const;

  std::vector<int64_t> inner_shape_;
  std::vector<int64_t> grid_;
  std::shared_ptr<const CodecChain> inner_;
  std::shared_ptr<const CodecChain> index_;
  IndexLocation location_;
  size_t index_size_;
};

}  // namespace zarrd
