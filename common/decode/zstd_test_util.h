// Helpers for the zstd decoder's tests and fuzz targets: libzstd as the reference (compress with
// chosen parameters, decode one-shot), generated data of several kinds, and a reader of frame,
// block and section headers that counts which encodings a frame uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/decode/zstd_blocks.h"
#include "common/decode/zstd_decode.h"

namespace zarrd::decode::testing {

using Buffer = std::vector<uint8_t>;

struct CompressOptions {
  int level = 3;
  bool checksum = false;
  bool content_size = true;
  bool long_distance = false;
  int window_log = 0;  // 0: the level's default
};
Buffer LibCompress(const Buffer& in, const CompressOptions& options);

// libzstd's one-shot decode of every frame in src into at most `capacity` bytes; false when it
// rejects the input.
bool LibDecompress(const uint8_t* src, size_t size, size_t capacity, Buffer* out);

// Our decoders: DecodeZstd (frame by frame, the one-lane decoder that blosc's zstd blocks use)
// and DecodeZstdBlocks (block-parallel, the GPU kernels' steps in order on one lane).
enum class ZstdCore { kFrames, kBlocks };
const char* ZstdCoreName(ZstdCore core);

// One of our decoders on the host into exactly dst_size bytes.
DecodeError OurDecompress(const uint8_t* src, size_t size, size_t dst_size, Buffer* out,
                          ZstdCore core = ZstdCore::kFrames);

// A skippable frame (magic 0x184D2A5n) holding `payload`.
Buffer SkippableFrame(uint32_t n, const Buffer& payload);

// A frame of `content` in raw blocks of one byte each, without content size: more blocks than
// the block-parallel core's split holds for that many bytes (zstd::SplitCapacity).
Buffer OneByteBlocks(const Buffer& content);

enum class DataKind {
  kZeros,
  kRandomBytes,
  kSortedInts,
  kRandomFloats,
  kSmoothFloats,  // slowly varying float32, like the benchmark's arrays
  kText,
  kPeriodic,  // a short pattern repeated with rare changes
  kSlices,    // slices of a random block separated by one constant byte: RLE literals
  kMixed,     // runs of the kinds above
};
const char* DataKindName(DataKind kind);
constexpr DataKind kAllKinds[] = {
    DataKind::kZeros,        DataKind::kRandomBytes,  DataKind::kSortedInts,
    DataKind::kRandomFloats, DataKind::kSmoothFloats, DataKind::kText,
    DataKind::kPeriodic,     DataKind::kSlices,       DataKind::kMixed};
Buffer MakeData(DataKind kind, size_t size, uint32_t seed);

// Encodings seen in frames, counted by reading headers only.
struct FrameFeatures {
  int frames = 0, skippable = 0, checksums = 0, content_sizes = 0;
  int raw_blocks = 0, rle_blocks = 0, compressed_blocks = 0;
  int raw_literals = 0, rle_literals = 0, huffman_1_stream = 0, huffman_4_streams = 0,
      treeless_literals = 0;
  int no_sequences = 0;
  int fse_mode[4] = {};  // predefined, RLE, compressed, repeat: over the three tables
  void Add(const FrameFeatures& other);
  std::string ToString() const;
};
// False when the headers do not parse (the frames are not well formed).
bool InspectFrames(const uint8_t* src, size_t size, FrameFeatures* out);

}  // namespace zarrd::decode::testing
