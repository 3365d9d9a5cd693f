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

// auto decodes reads of at least this many chunks of auto_families on the GPU. Measured on the
// H200 with 16 cores (bench/gpu_decode_read, 1 MiB chunks), GPU time / CPU time: zstd 3 at 256
// chunks 1.72, at 1024 0.58; blosc lz4 + shuffle at 256 1.49, at 1024 0.86; one chunk 22 (zstd)
// and 8 (blosc), a kernel's per-chunk latency (69 ms, 5.7 ms) against a CPU decode under 3 ms.
// The floor is the smallest size measured where the GPU won.
constexpr size_t kGpuDecodeMinChunks = 1024;

struct GpuDecodePolicy {
  GpuDecodeMode mode = GpuDecodeMode::kAuto;
  size_t min_chunks = kGpuDecodeMinChunks;
  // What auto decodes on the GPU: the compressors measured faster there end to end (the suite,
  // 16 cores): R1 (zstd 3) whole to the GPU 13.7 GB/s decoding on the GPU against 5.1 on the
  // CPUs and R4 (blosc lz4 + shuffle) 19.7 against 10.8 (H200, 2026-12-05); R5 (gzip 5) 5.30
  // against 2.40 (H100, 2026-12-07, a warp a stream through a 16 KiB window).
  std::vector<CompressorFamily> auto_families = {CompressorFamily::kZstd, CompressorFamily::kBlosc,
                                                 CompressorFamily::kDeflate};
  // Whether a read of `num_chunks` chunks of a chain ending in `kind` decodes on the GPU.
  bool Use(size_t num_chunks, CompressorFamily kind) const;
};

// An encoded chunk as the GPU kernels take it.
// kBloscZstd: blosc containers of zstd splits, whose launch needs zstd workspaces.
enum class GpuCodec : uint8_t { kZstd, kBlosc, kBloscZstd, kGzip, kZlib };
const char* GpuCodecName(GpuCodec codec);

// A chain the GPU decodes: transposes (placed by strided copies), bytes (little-endian, or
// big-endian with `swap_unit`-byte elements swapped after decoding), exactly one of zstd, blosc,
// gzip and zlib, and a crc32c checksum after it. Other codecs keep the chain on the CPU.
struct GpuChain {
  CompressorFamily kind = CompressorFamily::kOther;
  uint32_t swap_unit = 1;
  bool crc32c = false;  // the stored chunks end in the crc32c of what precedes it
  // The transposes', composed (encoded dimension i is decoded dimension order[i]); empty when the
  // chunks are stored in C order.
  std::vector<size_t> dimension_order;
};
std::optional<GpuChain> PlanGpuChain(const CodecChain& chain, DataType dtype);

// The kernel for one stored chunk of `encoded_size` bytes that decodes to `decoded_bytes`, or
// nullopt for the CPU: zstd frames and zlib streams that need a preset dictionary, zstd frames of
// more blocks than the kernel's split holds (blocks averaging under 1 KiB; zstd::FitsSplit) and
// chunks too short for their crc32c. `head` is the chunk's first bytes, or all of them (a value in
// GPU memory gives its head only): what lies past it is not checked. A chunk whose header is
// corrupt goes to the GPU, which reports it (DATA_LOSS as on the CPU).
std::optional<GpuCodec> GpuCodecFor(const GpuChain& chain, ByteView head, size_t encoded_size,
                                    size_t decoded_bytes);

}  // namespace zarrd
