// Step 1 of the block-parallel zstd decoder (zstd_blocks.h): the split of a task's frames into
// blocks that can be entropy-decoded independently. One lane walks the frame and block headers
// and, for compressed blocks, the literals and sequences section headers, without entropy
// decoding: the size of a Huffman tree description is in its first byte, and an FSE table
// description is read for its size only (ReadFseCounts, no table built). Each block records
// where its tables come from: its own descriptions, or for treeless literals and the repeat mode
// the earlier block's that the frame last described, so that no block depends on another's
// decoding. The literals and sequences of all compressed blocks get places in the task's region:
// literals from its start, sequences (12 bytes each) from its end down.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"
#include "common/decode/zstd_frame_header.h"
#include "common/decode/zstd_literals.h"
#include "common/decode/zstd_sequences.h"

namespace zarrd::decode::zstd {

enum BlockKind : uint8_t { kRawBlock = 0, kRleBlock = 1, kCompressedBlock = 2 };
enum BlockFlags : uint8_t {
  kFirstInFrame = 1,
  kLastInFrame = 2,
  kHasContentSize = 4,  // with kLastInFrame: the frame's content size is content_size
  kHasChecksum = 8,     // with kLastInFrame: the frame's XXH64 checksum's low 32 bits
};

// A description of an FSE table in the task's input: mode 0 predefined, 1 RLE (the symbol at
// `at`), 2 compressed (`size` bytes at `at`).
struct TableSource {
  uint64_t at;
  uint32_t size;
  uint32_t mode;
};

// A decoded sequence before its offset is resolved: its lengths and its offset as SymbolicOffset
// (zstd_sequences.h) gives it, the offset's tag in the top bits of tag_literal_length (literal
// lengths take 17 bits).
struct RawSequence {
  uint32_t tag_literal_length;
  uint32_t match_length;
  uint32_t offset;
};
constexpr uint32_t kTagShift = 30;

struct SplitBlock {
  uint64_t src;      // the block's content in the task's input (after its 3-byte header)
  uint32_t size;     // raw: bytes; RLE: output bytes; compressed: content bytes
  uint8_t kind;      // BlockKind
  uint8_t flags;     // BlockFlags
  uint8_t lit_type;  // literals section type: 0 raw, 1 RLE, 2 and 3 Huffman
  uint8_t four_streams;
  uint32_t lit_count;
  uint32_t lit_at;    // the literals (raw), the RLE byte or the Huffman streams in the block
  uint32_t lit_size;  // bytes of the Huffman streams
  uint32_t huf_size;  // bytes of the tree description at huf_at
  uint64_t huf_at;    // in the task's input
  uint32_t seq_count;
  uint32_t seq_at;  // the sequence bit stream in the block, to its end
  TableSource ll, of, ml;
  uint64_t lit_place;  // of the literals (RLE, Huffman) in the task's region
  uint64_t seq_place;  // of the sequences in the task's region
  uint64_t content_size;
  uint32_t checksum;
  // Set by the entropy step: the block's output bytes, whether its decoding failed, and the
  // repeat offsets after it as SymbolicOffset leaves them.
  uint64_t out_size;
  DecodeError error;
  uint32_t rep[3];
  uint32_t rep_tag[3];
};

// One task's share of the scratch memory and the split's result.
struct TaskSplit {
  SplitBlock* blocks = nullptr;
  uint32_t capacity = 0;  // blocks
  uint32_t count = 0;     // blocks split
  uint8_t* region = nullptr;
  uint64_t region_size = 0;
  DecodeError error = DecodeError::kOk;  // where the split stopped after `count` blocks
};

// A task decoding to dst_size bytes gets room for this many blocks (blocks of 1 KiB, the least
// window, and a few frames more; a task of smaller blocks is kUnsupported) and a region of this
// many bytes: a block of N output bytes holds at most N literals and N / 3 sequences, which take
// at most 4 N bytes.
ZARRD_HD inline uint32_t SplitCapacity(uint64_t dst_size) {
  const uint64_t n = dst_size / 1024 + 16;
  return n > 0x7FFFFFFFu ? 0x7FFFFFFFu : uint32_t(n);
}
ZARRD_HD inline uint64_t RegionSize(uint64_t dst_size) { return 4 * dst_size + 64; }

// Where the tables of each field were last described in the frame (valid after a block with
// sequences), and its Huffman tree (huf_size 0: none yet).
struct FrameTables {
  TableSource field[3];
  bool fse_valid = false;
  uint64_t huf_at = 0;
  uint32_t huf_size = 0;
};

// The sections of compressed block b (b->src, b->size set) of the task's input `src`.
ZARRD_HD inline DecodeError SplitCompressed(const uint8_t* src, SplitBlock* b, FrameTables* ft) {
  const uint8_t* block = src + b->src;
  const uint64_t size = b->size;
  LiteralsHeader h;
  DecodeError e = ReadLiteralsHeader(block, size, &h);
  if (e != DecodeError::kOk) return e;
  b->lit_type = uint8_t(h.type);
  b->four_streams = h.four_streams;
  b->lit_count = h.count;
  b->lit_at = h.header;
  b->lit_size = h.payload;
  if (h.type == 2) {
    if (h.payload == 0) return DecodeError::kCorrupt;
    const uint32_t first = block[h.header];
    const uint32_t tree = first < 128 ? 1 + first : 1 + (first - 127 + 1) / 2;
    if (tree > h.payload) return DecodeError::kCorrupt;
    ft->huf_at = b->src + h.header;
    ft->huf_size = tree;
    b->lit_at = h.header + tree;
    b->lit_size = h.payload - tree;
  } else if (h.type == 3 && ft->huf_size == 0) {
    return DecodeError::kCorrupt;
  }
  b->huf_at = ft->huf_at;
  b->huf_size = ft->huf_size;
  uint64_t pos = h.header + uint64_t(h.payload);
  uint64_t count = 0, used = 0;
  e = ReadSequenceCount(block + pos, size - pos, &count, &used);
  if (e != DecodeError::kOk) return e;
  b->seq_count = uint32_t(count);
  pos += used;
  if (count == 0) {
    b->seq_at = uint32_t(pos);
    return DecodeError::kOk;
  }
  if (pos >= size) return DecodeError::kTruncated;
  const uint32_t modes = block[pos++];
  TableSource* out[3] = {&b->ll, &b->of, &b->ml};
  for (int i = 0; i < 3; ++i) {
    const uint32_t mode = (modes >> ModeShift(i)) & 3;
    TableSource& t = ft->field[i];
    if (mode == 3) {
      if (!ft->fse_valid) return DecodeError::kCorrupt;
      *out[i] = t;
      continue;
    }
    t = TableSource{b->src + pos, 0, mode};
    if (mode == 1) {
      if (pos >= size) return DecodeError::kTruncated;
      if (block[pos] > FieldMaxSymbol(FieldAt(i))) return DecodeError::kCorrupt;
      t.size = 1;
    } else if (mode == 2) {
      int16_t norm[64];
      uint32_t log = 0;
      uint64_t n = 0;
      const Field f = FieldAt(i);
      e = ReadFseCounts(block + pos, size - pos, FieldMaxSymbol(f),
                        f == Field::kOffset ? kOffsetLogMax : kMatchLogMax, norm, &log, &n);
      if (e != DecodeError::kOk) return DecodeError::kCorrupt;
      t.size = uint32_t(n);
    }
    pos += t.size;
    *out[i] = t;
  }
  ft->fse_valid = true;
  b->seq_at = uint32_t(pos);
  return DecodeError::kOk;
}

// Splits the frame at src[pos..size) (its magic number checked) into blocks after the `s->count`
// already there; advances pos. `lower` is a lower bound of the task's output so far, `lit` and
// `seq` the region's bytes taken by literals and sequences.
ZARRD_HD inline DecodeError SplitFrame(const uint8_t* src, uint64_t size, uint64_t* at,
                                       uint64_t dst_size, TaskSplit* s, uint64_t* lower,
                                       uint64_t* lit, uint64_t* seq) {
  FrameHeader fh;
  uint64_t used = 0;
  const DecodeError he = ReadFrameHeader(src + *at, size - *at, &fh, &used);
  if (he != DecodeError::kOk) return he;
  uint64_t pos = *at + used;
  FrameTables ft;
  const uint32_t first = s->count;
  for (bool last = false; !last;) {
    BlockHeader bh;
    if (!ReadBlockHeader(src, size, &pos, &bh)) return DecodeError::kTruncated;
    last = bh.last;
    const uint32_t type = bh.type;
    const uint32_t block_size = bh.size;
    const uint64_t left = size - pos;
    if (type == 3) return DecodeError::kCorrupt;
    if (type != 1 && block_size > left) return DecodeError::kTruncated;
    if (type == 1 && left < 1) return DecodeError::kTruncated;
    if (s->count == s->capacity) return DecodeError::kUnsupported;
    SplitBlock& b = s->blocks[s->count];
    b = SplitBlock{};
    b.src = pos;
    b.size = block_size;
    b.kind = uint8_t(type);
    b.flags = s->count == first ? kFirstInFrame : 0;
    if (type != 2) {
      if (block_size > dst_size - *lower) return DecodeError::kOutputOverrun;
      *lower += block_size;
      b.out_size = block_size;
      pos += type == 0 ? block_size : 1;
    } else {
      const DecodeError e = SplitCompressed(src, &b, &ft);
      if (e != DecodeError::kOk) return e == DecodeError::kTruncated ? DecodeError::kCorrupt : e;
      const uint64_t least = b.lit_count + 3 * uint64_t(b.seq_count);
      if (least > dst_size - *lower) return DecodeError::kOutputOverrun;
      *lower += least;
      if (b.lit_type != 0) {
        b.lit_place = *lit;
        *lit += b.lit_count;
      }
      *seq += sizeof(RawSequence) * uint64_t(b.seq_count);
      if (*lit + *seq > s->region_size) return DecodeError::kOutputOverrun;  // as `lower` says
      b.seq_place = s->region_size - *seq;
      pos += block_size;
    }
    ++s->count;
  }
  SplitBlock& end = s->blocks[s->count - 1];
  end.flags |= kLastInFrame;
  if (fh.has_content_size) {
    end.flags |= kHasContentSize;
    end.content_size = fh.content_size;
  }
  if (fh.has_checksum) {
    if (size - pos < 4) return DecodeError::kTruncated;
    end.flags |= kHasChecksum;
    end.checksum = ReadLE32(src + pos);
    pos += 4;
  }
  *at = pos;
  return DecodeError::kOk;
}

// Whether the blocks of src[0..size) fit the split of a task decoding to dst_size bytes
// (SplitCapacity), from the frame and block headers alone. Input that cannot be walked answers
// true: the split then says what is wrong with it.
ZARRD_HD inline bool FitsSplit(const uint8_t* src, uint64_t size, uint64_t dst_size) {
  const uint32_t capacity = SplitCapacity(dst_size);
  uint64_t pos = 0;
  uint32_t count = 0;
  while (size - pos >= 5) {
    const uint32_t magic = ReadLE32(src + pos);
    if ((magic & kSkippableMask) == kSkippableMagic) {
      if (size - pos < 8 || ReadLE32(src + pos + 4) > size - pos - 8) return true;
      pos += 8 + uint64_t(ReadLE32(src + pos + 4));
      continue;
    }
    FrameHeader fh;
    uint64_t used = 0;
    if (magic != kMagic || ReadFrameHeader(src + pos, size - pos, &fh, &used) != DecodeError::kOk) {
      return true;
    }
    pos += used;
    for (bool last = false; !last;) {
      BlockHeader bh;
      if (!ReadBlockHeader(src, size, &pos, &bh)) return true;
      last = bh.last;
      if (++count > capacity) return false;
      const uint64_t content = bh.type == 1 ? 1 : bh.size;
      if (content > size - pos) return true;
      pos += content;
    }
    if (fh.has_checksum) {
      if (size - pos < 4) return true;
      pos += 4;
    }
  }
  return true;
}

// Splits every frame of src[0..size) (zstd and skippable frames) into s->blocks; sets s->count
// and s->error (kOk when the input ended after its last frame).
ZARRD_HD inline void SplitTask(const uint8_t* src, uint64_t size, uint64_t dst_size, TaskSplit* s) {
  s->count = 0;
  uint64_t pos = 0, lower = 0, lit = 0, seq = 0;
  DecodeError e = DecodeError::kOk;
  while (e == DecodeError::kOk && size - pos >= 5) {
    const uint32_t magic = ReadLE32(src + pos);
    if ((magic & kSkippableMask) == kSkippableMagic) {
      if (size - pos < 8 || ReadLE32(src + pos + 4) > size - pos - 8) {
        e = DecodeError::kTruncated;
      } else {
        pos += 8 + uint64_t(ReadLE32(src + pos + 4));
      }
    } else if (magic != kMagic) {
      e = DecodeError::kCorrupt;
    } else {
      e = SplitFrame(src, size, &pos, dst_size, s, &lower, &lit, &seq);
    }
  }
  if (e == DecodeError::kOk && pos != size) e = DecodeError::kTruncated;
  s->error = e;
}

}  // namespace zarrd::decode::zstd
