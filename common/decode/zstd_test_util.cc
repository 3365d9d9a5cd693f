#include "common/decode/zstd_test_util.h"

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>

namespace zarrd::decode::testing {

Buffer LibCompress(const Buffer& in, const CompressOptions& o) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, o.level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, o.checksum ? 1 : 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, o.content_size ? 1 : 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, o.long_distance ? 1 : 0);
  if (o.window_log) ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, o.window_log);
  Buffer out(ZSTD_compressBound(in.size()));
  size_t n;
  if (o.content_size) {
    n = ZSTD_compress2(cctx, out.data(), out.size(), in.data(), in.size());
  } else {
    // Streamed without a pledged size: the frame header carries no content size.
    ZSTD_outBuffer ob{out.data(), out.size(), 0};
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    do {
      n = ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
    } while (n != 0 && !ZSTD_isError(n));
    n = ZSTD_isError(n) ? n : ob.pos;
  }
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) return {};
  out.resize(n);
  return out;
}

bool LibDecompress(const uint8_t* src, size_t size, size_t capacity, Buffer* out) {
  const unsigned long long known = ZSTD_findDecompressedSize(src, size);
  if (known < capacity) capacity = size_t(known);  // also excludes the error values
  out->assign(capacity, 0);
  const size_t n = ZSTD_decompress(out->data(), capacity, src, size);
  if (ZSTD_isError(n)) return false;
  out->resize(n);
  return true;
}

const char* ZstdCoreName(ZstdCore core) { return core == ZstdCore::kFrames ? "frames" : "blocks"; }

DecodeError OurDecompress(const uint8_t* src, size_t size, size_t dst_size, Buffer* out,
                          ZstdCore core) {
  static thread_local std::unique_ptr<ZstdWorkspace> ws(new ZstdWorkspace);
  static thread_local std::unique_ptr<ZstdBlockScratch> scratch(new ZstdBlockScratch);
  out->assign(dst_size, 0);
  uint64_t written = 0;
  if (core == ZstdCore::kBlocks) {
    return DecodeZstdBlocks(src, size, out->data(), dst_size, &written, scratch.get());
  }
  return DecodeZstd(src, size, out->data(), dst_size, &written, ws.get());
}

Buffer OneByteBlocks(const Buffer& content) {
  Buffer f = {0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00};  // no content size, 1 KiB window
  for (size_t i = 0; i < content.size(); ++i) {
    const uint32_t header = (1u << 3) | (i + 1 == content.size() ? 1 : 0);  // raw, 1 byte
    f.push_back(uint8_t(header));
    f.push_back(uint8_t(header >> 8));
    f.push_back(uint8_t(header >> 16));
    f.push_back(content[i]);
  }
  return f;
}

Buffer SkippableFrame(uint32_t n, const Buffer& payload) {
  Buffer out(8);
  const uint32_t magic = 0x184D2A50u | (n & 15), size = uint32_t(payload.size());
  for (int i = 0; i < 4; ++i) {
    out[i] = uint8_t(magic >> (8 * i));
    out[4 + i] = uint8_t(size >> (8 * i));
  }
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

const char* DataKindName(DataKind kind) {
  switch (kind) {
    case DataKind::kZeros:
      return "zeros";
    case DataKind::kRandomBytes:
      return "random_bytes";
    case DataKind::kSortedInts:
      return "sorted_ints";
    case DataKind::kRandomFloats:
      return "random_floats";
    case DataKind::kSmoothFloats:
      return "smooth_floats";
    case DataKind::kText:
      return "text";
    case DataKind::kPeriodic:
      return "periodic";
    case DataKind::kSlices:
      return "slices";
    case DataKind::kMixed:
      return "mixed";
  }
  return "?";
}

namespace {

void Append(Buffer* out, const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  out->insert(out->end(), b, b + n);
}

void Fill(DataKind kind, size_t size, std::mt19937& rng, Buffer* out) {
  const size_t end = out->size() + size;
  switch (kind) {
    case DataKind::kZeros:
      out->resize(end, 0);
      break;
    case DataKind::kRandomBytes:
      while (out->size() < end) out->push_back(uint8_t(rng()));
      break;
    case DataKind::kSortedInts: {
      int32_t v = int32_t(rng() % 1000);
      while (out->size() < end) {
        v += int32_t(rng() % 5);
        Append(out, &v, 4);
      }
      break;
    }
    case DataKind::kRandomFloats: {
      std::normal_distribution<float> d(0.f, 1.f);
      while (out->size() < end) {
        const float f = d(rng);
        Append(out, &f, 4);
      }
      break;
    }
    case DataKind::kSmoothFloats: {
      for (size_t i = 0; out->size() < end; ++i) {
        const float f = float(std::sin(double(i) * 0.001)) * 100.f + float(i % 64) * 0.25f;
        Append(out, &f, 4);
      }
      break;
    }
    case DataKind::kText: {
      static const char* words[] = {"zarr ", "chunk ", "array ", "decode ", "the ",  "of ",
                                    "GPU ",  "frame ", "block ", "and ",    "data\n"};
      while (out->size() < end) {
        const char* w = words[rng() % (sizeof words / sizeof *words)];
        Append(out, w, std::strlen(w));
      }
      break;
    }
    case DataKind::kPeriodic: {
      const uint8_t pattern[7] = {1, 2, 3, 4, 5, 6, 7};
      for (size_t i = 0; out->size() < end; ++i) {
        out->push_back(rng() % 5000 == 0 ? uint8_t(rng()) : pattern[i % 7]);
      }
      break;
    }
    case DataKind::kSlices: {
      Buffer block(4096);
      for (uint8_t& b : block) b = uint8_t(rng());
      while (out->size() < end) {
        const size_t begin = rng() % 3000, length = 40 + rng() % 1000;
        Append(out, block.data() + begin, length);
        out->push_back('z');
      }
      break;
    }
    case DataKind::kMixed:
      while (out->size() < end) {
        const DataKind k = kAllKinds[rng() % 8];
        Fill(k, 1 + rng() % 20000, rng, out);
      }
      break;
  }
  out->resize(end);
}

}  // namespace

Buffer MakeData(DataKind kind, size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  Buffer out;
  out.reserve(size);
  Fill(kind, size, rng, &out);
  return out;
}

void FrameFeatures::Add(const FrameFeatures& o) {
  frames += o.frames;
  skippable += o.skippable;
  checksums += o.checksums;
  content_sizes += o.content_sizes;
  raw_blocks += o.raw_blocks;
  rle_blocks += o.rle_blocks;
  compressed_blocks += o.compressed_blocks;
  raw_literals += o.raw_literals;
  rle_literals += o.rle_literals;
  huffman_1_stream += o.huffman_1_stream;
  huffman_4_streams += o.huffman_4_streams;
  treeless_literals += o.treeless_literals;
  no_sequences += o.no_sequences;
  for (int i = 0; i < 4; ++i) fse_mode[i] += o.fse_mode[i];
}

std::string FrameFeatures::ToString() const {
  char s[512];
  std::snprintf(s, sizeof s,
                "frames %d skippable %d checksums %d content_sizes %d | blocks raw %d rle %d "
                "compressed %d | literals raw %d rle %d huf1 %d huf4 %d treeless %d | "
                "no_sequences %d | fse predefined %d rle %d compressed %d repeat %d",
                frames, skippable, checksums, content_sizes, raw_blocks, rle_blocks,
                compressed_blocks, raw_literals, rle_literals, huffman_1_stream, huffman_4_streams,
                treeless_literals, no_sequences, fse_mode[0], fse_mode[1], fse_mode[2],
                fse_mode[3]);
  return s;
}

namespace {

uint32_t Le(const uint8_t* p, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}

void InspectCompressedBlock(const uint8_t* b, size_t size, FrameFeatures* f) {
  const uint32_t type = b[0] & 3, format = (b[0] >> 2) & 3;
  size_t lit_section;
  if (type <= 1) {
    const size_t header = format == 1 ? 2 : format == 3 ? 3 : 1;
    const size_t count = header == 1 ? b[0] >> 3 : Le(b, int(header)) >> 4;
    lit_section = header + (type == 0 ? count : 1);
    (type == 0 ? f->raw_literals : f->rle_literals)++;
  } else {
    const size_t header = format <= 1 ? 3 : format == 2 ? 4 : 5;
    size_t compressed = header == 3   ? (Le(b, 3) >> 14) & 0x3FF
                        : header == 4 ? Le(b, 4) >> 18
                                      : (Le(b, 4) >> 22) + (size_t(b[4]) << 10);
    lit_section = header + compressed;
    if (type == 3) f->treeless_literals++;
    (format == 0 ? f->huffman_1_stream : f->huffman_4_streams)++;
  }
  if (lit_section >= size) return;
  const uint8_t* s = b + lit_section;
  uint32_t n = s[0], pos = 1;
  if (n == 0) {
    f->no_sequences++;
    return;
  }
  pos = n == 255 ? 3 : n >= 128 ? 2 : 1;
  const uint32_t modes = s[pos];
  f->fse_mode[(modes >> 6) & 3]++;
  f->fse_mode[(modes >> 4) & 3]++;
  f->fse_mode[(modes >> 2) & 3]++;
}

}  // namespace

bool InspectFrames(const uint8_t* src, size_t size, FrameFeatures* f) {
  size_t pos = 0;
  while (pos < size) {
    if (size - pos < 8) return false;
    const uint32_t magic = Le(src + pos, 4);
    if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {
      f->skippable++;
      pos += 8 + Le(src + pos + 4, 4);
      continue;
    }
    if (magic != 0xFD2FB528u) return false;
    f->frames++;
    const uint32_t d = src[pos + 4];
    const bool single = (d >> 5) & 1;
    const uint32_t fcs = d >> 6, dict = d & 3;
    const size_t fcs_bytes = fcs == 0 ? (single ? 1 : 0) : size_t(1) << fcs;
    if (fcs_bytes) f->content_sizes++;
    pos += 5 + (single ? 0 : 1) + (dict == 3 ? 4 : dict) + fcs_bytes;
    for (bool last = false; !last;) {
      if (size - pos < 3) return false;
      const uint32_t h = Le(src + pos, 3);
      pos += 3;
      last = h & 1;
      const uint32_t type = (h >> 1) & 3, bsize = h >> 3;
      if (type == 0) {
        f->raw_blocks++;
        pos += bsize;
      } else if (type == 1) {
        f->rle_blocks++;
        pos += 1;
      } else if (type == 2) {
        f->compressed_blocks++;
        if (bsize > size - pos) return false;
        InspectCompressedBlock(src + pos, bsize, f);
        pos += bsize;
      } else {
        return false;
      }
      if (pos > size) return false;
    }
    if ((d >> 2) & 1) {
      f->checksums++;
      pos += 4;
    }
  }
  return pos == size;
}

}  // namespace zarrd::decode::testing
