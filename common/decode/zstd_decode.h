// A zstd decoder (RFC 8878) that runs on the host and, compiled by nvcc, on the GPU.
//
//   DecodeError DecodeZstd(src, src_size, dst, dst_size, &written, ws[, lanes])
//
// decodes every frame in src[0..src_size) (zstd frames and skippable frames, concatenated) into
// dst, which the frames must fill exactly: kOutputShort when they decode to fewer than dst_size
// bytes, kOutputOverrun when to more (nothing is written past dst_size). `written` is the number
// of bytes produced, also on error. Raw, RLE and compressed blocks; raw, RLE and Huffman literals
// (1 or 4 streams, new or repeated tables); FSE sequence tables in the predefined, RLE,
// compressed and repeat modes; repeat offsets; matches back to the start of their frame; the
// content size and XXH64 checksum checked when present. Frames that need a dictionary give
// kUnsupported. The empty input decodes to 0 bytes.
//
// Bounds: every read is checked against the bytes left (bit streams read zeros past their ends
// and must be consumed exactly), every write against dst_size, every table description against
// its limits (accuracy logs, symbol counts, sums); the loops run at most once per input bit or
// output byte. Stricter than libzstd (1.5.4) where RFC 8878 asks for it: a Huffman or sequence
// bit stream that is not consumed exactly is corrupt (libzstd's fast Huffman path only checks
// the literal count, and it accepts sequence streams read past their start). More lenient where
// libzstd adds limits of its own (block sizes against the window, trailing bytes after a block
// without sequences): outputs are bounded by dst_size all the same.
//
// Workspace: ZstdWorkspace (kZstdWorkspaceSize, about 170 KiB) holds the tables, repeat offsets,
// a batch of sequences, scratch and a 128 KiB literal buffer; no allocation, no exceptions. The
// caller gives one per concurrent decoder; the tables (ZstdTables) may be passed apart.
//
// Parallel split (zstd::Lanes, or any type with its members): every lane parses headers itself;
// lane 0 reads entropy tables, Huffman single streams and the sequence bit stream (a batch of
// kSequenceBatch sequences at a time, placed and checked as it decodes them); lanes 0-3 decode
// the four Huffman streams; all lanes copy raw and RLE blocks and literals, and execute each
// batch at once, lane i the short sequences i, i + count, ... and all lanes the long ones
// (zstd_execute.h). The host runs it as one lane. The GPU kernels decode with the block-parallel
// core instead (zstd_blocks.h: the blocks of a frame entropy-decoded at once), which shares this
// decoder's parts (literals, sequences, tables, batch execution).
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"
#include "common/decode/zstd_frame_header.h"
#include "common/decode/zstd_literals.h"
#include "common/decode/zstd_sequences.h"
#include "common/decode/zstd_workspace.h"
#include "common/decode/zstd_xxh64.h"

namespace zarrd::decode {

namespace zstd {

// Decodes the frame at src[0..size) (its magic number already checked) into dst[*out..]; sets
// the bytes of src it used.
template <class L>
ZARRD_HD DecodeError DecodeFrame(const uint8_t* src, uint64_t size, uint8_t* dst, uint64_t dst_size,
                                 uint64_t* out, uint64_t* used, ZstdWorkspace* ws, ZstdTables* t,
                                 const L& lanes) {
  FrameHeader fh;
  uint64_t pos = 0;
  const DecodeError he = ReadFrameHeader(src, size, &fh, &pos);
  if (he != DecodeError::kOk) return he;
  if (lanes.Leader()) {
    t->huf_log = 0;
    t->fse_valid = false;
    t->rep[0] = 1;
    t->rep[1] = 4;
    t->rep[2] = 8;
  }
  lanes.Sync();
  const uint64_t frame_start = *out;
  uint64_t op = frame_start;
  for (bool last = false; !last;) {
    BlockHeader bh;
    if (!ReadBlockHeader(src, size, &pos, &bh)) return DecodeError::kTruncated;
    last = bh.last;
    const uint32_t type = bh.type;
    const uint32_t block_size = bh.size;
    const uint64_t left = size - pos;
    if (type == 0) {  // raw
      if (block_size > left) return DecodeError::kTruncated;
      if (block_size > dst_size - op) return DecodeError::kOutputOverrun;
      CopyBytes(dst + op, src + pos, block_size, lanes);
      op += block_size;
      pos += block_size;
    } else if (type == 1) {  // RLE
      if (left < 1) return DecodeError::kTruncated;
      if (block_size > dst_size - op) return DecodeError::kOutputOverrun;
      const uint8_t byte = src[pos];
      for (uint64_t i = lanes.lane; i < block_size; i += lanes.count) dst[op + i] = byte;
      op += block_size;
      pos += 1;
    } else if (type == 2) {  // compressed
      if (block_size > left) return DecodeError::kTruncated;
      Literals lit;
      uint64_t lit_used = 0;
      DecodeError e = DecodeLiterals(src + pos, block_size, ws, t, lanes, &lit, &lit_used);
      if (e != DecodeError::kOk) return e == DecodeError::kTruncated ? DecodeError::kCorrupt : e;
      e = DecodeSequences(src + pos + lit_used, block_size - lit_used, lit, dst, dst_size,
                          frame_start, &op, ws, t, lanes);
      if (e != DecodeError::kOk) return e == DecodeError::kTruncated ? DecodeError::kCorrupt : e;
      pos += block_size;
    } else {
      return DecodeError::kCorrupt;
    }
    lanes.Sync();
    *out = op;
  }
  if (fh.has_content_size && op - frame_start != fh.content_size) return DecodeError::kCorrupt;
  if (fh.has_checksum) {
    if (size - pos < 4) return DecodeError::kTruncated;
    uint64_t match = 1;
    if (lanes.Leader()) {
      match = uint32_t(Xxh64(dst + frame_start, op - frame_start, 0)) == ReadLE32(src + pos);
    }
    if (!lanes.Broadcast(match)) return DecodeError::kChecksum;
    pos += 4;
  }
  *used = pos;
  return DecodeError::kOk;
}

}  // namespace zstd

// See the top of this file. `tables`: &ws->tables, or the kernel's copy in shared memory. `lanes`:
// the calling warp's (zstd::Lanes{lane, 32}) on the GPU; any type with the members of
// zstd::Lanes.
template <class L>
ZARRD_HD DecodeError DecodeZstd(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                uint64_t dst_size, uint64_t* written, ZstdWorkspace* ws,
                                zstd::ZstdTables* tables, const L& lanes) {
  uint64_t pos = 0;
  uint64_t out = 0;
  DecodeError e = DecodeError::kOk;
  while (e == DecodeError::kOk && src_size - pos >= 5) {
    const uint32_t magic = zstd::ReadLE32(src + pos);
    if ((magic & zstd::kSkippableMask) == zstd::kSkippableMagic) {
      if (src_size - pos < 8) {
        e = DecodeError::kTruncated;
      } else if (zstd::ReadLE32(src + pos + 4) > src_size - pos - 8) {
        e = DecodeError::kTruncated;
      } else {
        pos += 8 + uint64_t(zstd::ReadLE32(src + pos + 4));
      }
    } else if (magic != zstd::kMagic) {
      e = DecodeError::kCorrupt;
    } else {
      uint64_t used = 0;
      e = zstd::DecodeFrame(src + pos, src_size - pos, dst, dst_size, &out, &used, ws, tables,
                            lanes);
      pos += used;
    }
  }
  if (e == DecodeError::kOk && pos != src_size) e = DecodeError::kTruncated;
  if (e == DecodeError::kOk && out != dst_size) e = DecodeError::kOutputShort;
  *written = out;
  return e;
}

// The workspace's own tables.
template <class L>
ZARRD_HD DecodeError DecodeZstd(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                uint64_t dst_size, uint64_t* written, ZstdWorkspace* ws,
                                const L& lanes) {
  return DecodeZstd(src, src_size, dst, dst_size, written, ws, &ws->tables, lanes);
}

// One lane: the host's entry, and the one the blosc container calls for its zstd blocks.
ZARRD_HD inline DecodeError DecodeZstd(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                       uint64_t dst_size, uint64_t* written, ZstdWorkspace* ws) {
  return DecodeZstd(src, src_size, dst, dst_size, written, ws, zstd::Lanes());
}

}  // namespace zarrd::decode
