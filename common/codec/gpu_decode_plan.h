// Which chunks of a read decode on the GPU (common/cuda's DeviceSink), decided on the host from
// the array's codec chain, the policy, and a peek at each chunk's first bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/codec/codec.h"

namespace zarrd {

enum class GpuDecodeMode { kAuto, kAlways, kNever };

Result<GpuDecodeMode> ParseGpuDecodeMode(std::string_view name);
const char* GpuDecodeModeName(GpuDecodeMode mode);

// auto decodes reads of at least this many chunks of auto_families on the GPU. No crossover was
// measured (the GPU lost at every size, see auto_families): the floor keeps one-chunk reads, where
// a kernel's per-chunk latency (5-120 ms) dwarfs a CPU decode (under 3 ms), on the CPUs.
constexpr size_t kGpuDecodeMinChunks = 16;

struct GpuDecodePolicy {
  GpuDecodeMode mode = GpuDecodeMode::kAuto;
  size_t min_chunks = kGpuDecodeMinChunks;
  // What auto decodes on the GPU: the compressors measured faster there end to end. None: on
  // the H200 with 16 cores (bench/gpu_decode_read) reads of 1 to 1024 chunks of 1 MiB took
  // 3.9-43x the CPU path's time decoding zstd 3 on the GPU and 1.6-7x for blosc lz4 + shuffle
  // (whole arrays 1.85 against 8.68 GB/s, 15.4 against 33.6). Deflate's kernel alone decoded
  // 0.3 GB/s where the CPUs decode 2.0 (bench/decode_kernels).
  std::vector<CompressorFamily> auto_families;
  // Whether a read of `num_chunks` chunks of a chain ending in `kind` decodes on the GPU.
  bool Use(size_t num_chunks, CompressorFamily kind) const;
};

// An encoded chunk as the GPU kernels take it.
enum class GpuCodec : uint8_t { kZstd, kBlosc, kGzip, kZlib };
const char* GpuCodecName(GpuCodec codec);

// A chain the GPU decodes: bytes (little-endian, or big-endian with `swap_unit`-byte elements
// swapped after decoding) and exactly one of zstd, blosc, gzip, zlib. Transpose, sharding,
// checksums and other codecs stay on the CPU.
struct GpuChain {
  CompressorFamily kind = CompressorFamily::kOther;
  uint32_t swap_unit = 1;
};
std::optional<GpuChain> PlanGpuChain(const CodecChain& chain, DataType dtype);

// The kernel for one stored chunk, or nullopt for the CPU: blosc containers of zstd splits (the
// blosc kernel has no zstd), zstd frames and zlib streams that need a preset dictionary. A
// chunk whose header is corrupt goes to the GPU, which reports it (DATA_LOSS as on the CPU).
std::optional<GpuCodec> GpuCodecFor(const GpuChain& chain, ByteView encoded);

}  // namespace zarrd
