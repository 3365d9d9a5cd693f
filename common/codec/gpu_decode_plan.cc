#include "common/codec/gpu_decode_plan.h"

#include <algorithm>
#include <string>

#include "common/decode/blosc1.h"
#include "common/decode/zstd_block_split.h"

namespace zarrd {

Result<GpuDecodeMode> ParseGpuDecodeMode(std::string_view name) {
  if (name == "auto") return GpuDecodeMode::kAuto;
  if (name == "always") return GpuDecodeMode::kAlways;
  if (name == "never") return GpuDecodeMode::kNever;
  return InvalidArgument("gpu_decode must be \"auto\", \"always\" or \"never\", got \"" +
                         std::string(name) + "\"");
}

const char* GpuDecodeModeName(GpuDecodeMode mode) {
  switch (mode) {
    case GpuDecodeMode::kAuto:
      return "auto";
    case GpuDecodeMode::kAlways:
      return "always";
    case GpuDecodeMode::kNever:
      return "never";
  }
  return "?";
}

bool GpuDecodePolicy::Use(size_t num_chunks, CompressorFamily kind) const {
  switch (mode) {
    case GpuDecodeMode::kAlways:
      return true;
    case GpuDecodeMode::kNever:
      return false;
    case GpuDecodeMode::kAuto:
      return num_chunks >= min_chunks &&
             std::find(auto_families.begin(), auto_families.end(), kind) != auto_families.end();
  }
  return false;
}

const char* GpuCodecName(GpuCodec codec) {
  switch (codec) {
    case GpuCodec::kZstd:
      return "zstd";
    case GpuCodec::kBlosc:
      return "blosc";
    case GpuCodec::kBloscZstd:
      return "blosc-zstd";
    case GpuCodec::kGzip:
      return "gzip";
    case GpuCodec::kZlib:
      return "zlib";
  }
  return "?";
}

std::optional<GpuChain> PlanGpuChain(const CodecChain& chain, DataType dtype) {
  const std::optional<Endian> order = chain.array_to_bytes().byte_order();
  if (!order) return std::nullopt;
  GpuChain plan;
  for (const auto& codec : chain.array_codecs()) {
    const std::vector<size_t> next = codec->DimensionOrder();
    if (next.empty()) return std::nullopt;
    if (plan.dimension_order.empty()) {
      plan.dimension_order = next;
      continue;
    }
    // decoded -> a -> b: encoded dimension i is dimension b[i] of a's output, a[b[i]] decoded.
    std::vector<size_t> composed(next.size());
    for (size_t i = 0; i < next.size(); ++i) composed[i] = plan.dimension_order[next[i]];
    plan.dimension_order = std::move(composed);
  }
  bool identity = true;
  for (size_t i = 0; i < plan.dimension_order.size(); ++i) identity &= plan.dimension_order[i] == i;
  if (identity) plan.dimension_order.clear();
  auto bytes = chain.bytes_codecs();
  if (!bytes.empty() && bytes.back()->family() == CompressorFamily::kCrc32c) {
    plan.crc32c = true;
    bytes = bytes.first(bytes.size() - 1);
  }
  if (bytes.size() != 1) return std::nullopt;
  plan.kind = bytes[0]->family();
  if (plan.kind == CompressorFamily::kOther || plan.kind == CompressorFamily::kCrc32c) {
    return std::nullopt;
  }
  if (*order == Endian::kBig) plan.swap_unit = static_cast<uint32_t>(SwapUnit(dtype));
  return plan;
}

std::optional<GpuCodec> GpuCodecFor(const GpuChain& chain, ByteView head, size_t encoded_size,
                                    size_t decoded_bytes) {
  if (chain.crc32c && encoded_size < 4) return std::nullopt;
  const size_t payload = encoded_size - (chain.crc32c ? 4 : 0);
  const uint8_t* p = head.data();
  const size_t n = std::min(head.size(), payload);
  switch (chain.kind) {
    case CompressorFamily::kZstd: {
      // Frame header: magic (4), descriptor, [window], [dictionary id of 0-4 bytes].
      if (n < 5 || decode::zstd::ReadLE32(p) != decode::zstd::kMagic) return GpuCodec::kZstd;
      const uint8_t descriptor = p[4];
      const size_t id_bytes = (descriptor & 3) == 3 ? 4 : (descriptor & 3);
      const size_t at = 5 + (((descriptor >> 5) & 1) ? 0 : 1);
      uint32_t id = 0;
      for (size_t i = 0; i < id_bytes && at + i < n; ++i) id |= uint32_t{p[at + i]} << (8 * i);
      if (id != 0) return std::nullopt;
      if (!decode::zstd::FitsSplit(p, n, decoded_bytes)) return std::nullopt;
      return GpuCodec::kZstd;
    }
    case CompressorFamily::kBlosc: {
      using namespace decode::blosc1;
      const bool zstd_splits = n >= kHeaderSize && !(p[2] & kMemcpyedFlag) &&
                               (p[2] >> 5) == static_cast<uint8_t>(decode::BloscCodec::kZstd);
      return zstd_splits ? GpuCodec::kBloscZstd : GpuCodec::kBlosc;
    }
    case CompressorFamily::kDeflate:
      if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return GpuCodec::kGzip;
      if (n >= 2 && (p[1] & 0x20)) return std::nullopt;  // FDICT
      return GpuCodec::kZlib;
    case CompressorFamily::kCrc32c:
    case CompressorFamily::kOther:
      break;
  }
  return std::nullopt;
}

}  // namespace zarrd
