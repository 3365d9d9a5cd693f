// libFuzzer target: shards of a sharding_indexed array (zarr-python's layout: inner chunks
// bytes + gzip, index bytes + crc32c at the end). Each input is decoded as it is (checksum
// checks) and again with its index checksum fixed up, so the entries themselves get fuzzed.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/codec/sharding.h"
#include "common/metadata/metadata.h"

namespace {

using namespace zarrd;

const ArrayMetadata& Metadata() {
  static const ArrayMetadata m = [] {
    auto parsed = ParseV3ArrayMetadata(nlohmann::json::parse(R"({
      "zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "int16",
      "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
      "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
      "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [1, 1],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "gzip", "configuration": {"level": 5}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": "end"}}]})"));
    if (!parsed.ok()) std::abort();
    return *parsed;
  }();
  return m;
}

void DecodeShard(ByteView shard) {
  const ArrayMetadata& m = Metadata();
  const auto& codec = dynamic_cast<const ShardingCodec&>(m.codec_chain->array_to_bytes());
  const ChunkSpec spec = m.chunk_spec();
  Bytes out(spec.num_bytes());
  (void)m.codec_chain->Decode(spec, shard, out.data());
  if (shard.size() < codec.index_size()) return;
  auto index = codec.DecodeIndex(shard.subspan(shard.size() - codec.index_size()), shard.size());
  if (!index.ok()) return;
  for (size_t i = 0; i < index->size(); ++i) {
    if (index->empty(i)) continue;
    // A valid index only names ranges inside the shard.
    if (index->offset(i) > shard.size() || index->nbytes(i) > shard.size() - index->offset(i)) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  DecodeShard(ByteView(data, size));
  if (size < 4 + 4 * 16) return 0;
  Bytes fixed(data, data + size);
  const uint32_t crc = Crc32c(ByteView(fixed.data() + size - 4 - 4 * 16, 4 * 16));
  std::memcpy(fixed.data() + size - 4, &crc, 4);  // little-endian host
  DecodeShard(fixed);
  return 0;
}
