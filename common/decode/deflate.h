// Inflate (RFC 1951: stored, fixed and dynamic Huffman blocks) and its zlib (RFC 1950, Adler-32
// checked) and gzip (RFC 1952, CRC-32 and length checked, several members) wrappers.
//
// Tables: each Huffman code gets a 10-bit lookup table (one probe for codes of up to 10 bits)
// and canonical count/symbol arrays for the rare longer codes; codes are validated as zlib does
// (over-subscribed codes and incomplete ones other than a single 1-bit code are corrupt). A
// table's entry says what its symbol is (a literal, a length's or distance's base and its extra
// bits, the end), so the parser does no arithmetic on symbols. The tables live in an
// InflateWorkspace (about 9.5 KiB), on the stack or in shared memory.
//
// Bounds: the bit reader pads past the input's end with zeros and counts the bits it handed out,
// so a stream that needs more bits than the input holds is reported truncated; every literal,
// copy and stored block is checked against the output left before it is written, and every
// distance against the bytes already written.
//
// Parallel split: lane 0 of `Lanes` (lanes.h) parses the stream (deflate is sequential). Without a
// window it writes the literals to the output and hands each match or stored block to all lanes,
// which split the copy. With an InflateWindow (the GPU kernel's, in shared memory) it writes
// everything into the window, and the lanes move each 4 KiB from there to the output. The
// checksums are split by piece across the lanes (checksums.h). A batched kernel runs one stream
// a warp, its workspace and window in shared memory; only lane 0 touches the workspace.
#pragma once

#include <cstdint>

#include "common/decode/checksums.h"
#include "common/decode/host_device.h"
#include "common/decode/lanes.h"

namespace zarrd::decode {

namespace inflate {
constexpr uint32_t kFastBits = 10;
constexpr uint32_t kMaxBits = 15;

// Which of deflate's three codes a table decodes; it says what its symbols mean.
enum class Code : uint8_t { kCodeLengths, kLitLen, kDistance };

// A decoded symbol as the parser uses it, in 32 bits: its code's length (bits 0-3), the extra bits
// that follow the code (4-7), its kind (8-9) and its value (16-31): a literal byte or code-length
// symbol, or the base of a length or a distance, to which the extra bits add.
namespace entry {
enum Kind : uint32_t { kLiteral, kBase, kEnd, kInvalid };
ZARRD_HD constexpr uint32_t Make(Kind kind, uint32_t value, uint32_t extra) {
  return value << 16 | kind << 8 | extra << 4;
}
ZARRD_HD constexpr uint32_t CodeLength(uint32_t e) { return e & 15; }
ZARRD_HD constexpr uint32_t Extra(uint32_t e) { return (e >> 4) & 15; }
ZARRD_HD constexpr Kind KindOf(uint32_t e) { return static_cast<Kind>((e >> 8) & 3); }
ZARRD_HD constexpr uint32_t Value(uint32_t e) { return e >> 16; }
}  // namespace entry

// Symbol `sym` of `code`, its code length not yet set (RFC 1951 3.2.5's tables).
ZARRD_HD inline uint32_t SymbolEntry(Code code, uint32_t sym) {
  using namespace entry;
  if (code == Code::kCodeLengths) return Make(kLiteral, sym, 0);
  if (code == Code::kLitLen) {
    if (sym < 256) return Make(kLiteral, sym, 0);
    if (sym == 256) return Make(kEnd, 0, 0);
    if (sym > 285) return Make(kInvalid, 0, 0);
    if (sym < 265) return Make(kBase, sym - 254, 0);
    if (sym == 285) return Make(kBase, 258, 0);
    const uint32_t extra = (sym - 261) / 4;
    return Make(kBase, ((4u + (sym - 265) % 4) << extra) + 3, extra);
  }
  if (sym > 29) return Make(kInvalid, 0, 0);
  if (sym < 4) return Make(kBase, sym + 1, 0);
  const uint32_t extra = sym / 2 - 1;
  return Make(kBase, ((2u + sym % 2) << extra) + 1, extra);
}

struct Huffman {
  uint32_t fast[1u << kFastBits];  // the entry of a code of up to kFastBits; 0 when longer
  uint16_t count[kMaxBits + 1];
  uint16_t symbol[288];
  Code code;
};

struct BitReader {
  const uint8_t* src;
  uint64_t size;
  uint64_t pos = 0;   // next byte to load
  uint64_t buf = 0;   // loaded bits, the next one lowest
  uint32_t bits = 0;  // bits in buf
  uint64_t used = 0;  // bits handed out

  ZARRD_HD BitReader(const uint8_t* s, uint64_t n) : src(s), size(n) {}
  ZARRD_HD void Refill() {
    if (bits > 56) return;
    if (pos <= size && size - pos >= 8) {
      // Eight independent loads; the bytes past the whole ones taken sit above `bits`, where
      // the next refill ORs the same bits again.
      uint64_t w = 0;
      ZARRD_UNROLL
      for (uint32_t k = 0; k < 8; ++k) w |= uint64_t{src[pos + k]} << (8 * k);
      buf |= w << bits;
      const uint32_t take = (63 - bits) >> 3;
      pos += take;
      bits += take * 8;
      return;
    }
    while (bits <= 56) {
      if (pos < size) buf |= uint64_t{src[pos]} << bits;
      ++pos;
      bits += 8;
    }
  }
  ZARRD_HD uint32_t Peek() {
    Refill();
    return static_cast<uint32_t>(buf);
  }
  ZARRD_HD void Drop(uint32_t n) {
    buf >>= n;
    bits -= n;
    used += n;
  }
  ZARRD_HD uint32_t Get(uint32_t n) {
    Refill();
    return Take(n);
  }
  // `n` bits of those loaded, without a refill: right after a Decode, which leaves at least 41.
  ZARRD_HD uint32_t Take(uint32_t n) {
    const uint32_t v = static_cast<uint32_t>(buf) & ((1u << n) - 1);
    Drop(n);
    return v;
  }
  ZARRD_HD bool Overrun() const { return used > size * 8; }
  // Drops the bits up to the next byte boundary and reads from there by bytes.
  ZARRD_HD uint64_t AlignToByte() {
    used = (used + 7) / 8 * 8;
    pos = used / 8;
    buf = 0;
    bits = 0;
    return pos;
  }
  ZARRD_HD void SkipBytes(uint64_t n) {
    used += n * 8;
    pos = used / 8;
  }
};

// Builds `h` for `code` from the code lengths of `n` symbols; false for a code zlib rejects.
ZARRD_HD inline bool Build(Huffman* h, Code code, const uint8_t* lengths, uint32_t n) {
  h->code = code;
  for (uint32_t l = 0; l <= kMaxBits; ++l) h->count[l] = 0;
  for (uint32_t s = 0; s < n; ++s) h->count[lengths[s]]++;
  for (uint32_t i = 0; i < (1u << kFastBits); ++i) h->fast[i] = 0;
  uint32_t max = 0;
  for (uint32_t l = 1; l <= kMaxBits; ++l) {
    if (h->count[l] != 0) max = l;
  }
  h->count[0] = 0;
  if (max == 0) return true;  // no symbols: any use of the code is corrupt
  int32_t left = 1;
  for (uint32_t l = 1; l <= kMaxBits; ++l) {
    left = left * 2 - h->count[l];
    if (left < 0) return false;
  }
  if (left > 0 && (code == Code::kCodeLengths || max != 1)) return false;
  uint16_t offs[kMaxBits + 2];
  offs[1] = 0;
  for (uint32_t l = 1; l <= kMaxBits; ++l) offs[l + 1] = offs[l] + h->count[l];
  for (uint32_t s = 0; s < n; ++s) {
    if (lengths[s] != 0) h->symbol[offs[lengths[s]]++] = static_cast<uint16_t>(s);
  }
  uint32_t next = 0, index = 0;
  for (uint32_t l = 1; l <= kFastBits; ++l) {
    for (uint32_t k = 0; k < h->count[l]; ++k, ++next, ++index) {
      uint32_t rev = 0;
      for (uint32_t b = 0; b < l; ++b) rev |= ((next >> b) & 1u) << (l - 1 - b);
      const uint32_t e = SymbolEntry(code, h->symbol[index]) | l;
      for (uint32_t f = rev; f < (1u << kFastBits); f += 1u << l) h->fast[f] = e;
    }
    next <<= 1;
  }
  return true;
}

// The entry of the next symbol of `h`, its code dropped from `br`; kInvalid for a bit pattern
// that is no code.
ZARRD_HD inline uint32_t Decode(const Huffman& h, BitReader* br) {
  const uint32_t bits = br->Peek();
  const uint32_t e = h.fast[bits & ((1u << kFastBits) - 1)];
  if (e != 0) {
    br->Drop(entry::CodeLength(e));
    return e;
  }
  int32_t code = 0, first = 0, index = 0;
  for (uint32_t l = 1; l <= kMaxBits; ++l) {
    code |= (bits >> (l - 1)) & 1;
    const int32_t count = h.count[l];
    if (code - count < first) {
      br->Drop(l);
      return SymbolEntry(h.code, h.symbol[index + (code - first)]) | l;
    }
    index += count;
    first = (first + count) << 1;
    code <<= 1;
  }
  return entry::Make(entry::kInvalid, 0, 0);
}
}  // namespace inflate

struct InflateWorkspace {
  inflate::Huffman lit;
  inflate::Huffman dist;
  uint8_t lengths[288 + 32];
};

// The last `size` bytes of output, for a parser whose copies should read a nearby window (GPU
// shared memory) instead of the output (GPU global memory, where each short match would wait on
// a round trip). The lanes move the window's new bytes to the output every kFlushBytes, so a match
// reaching further back than the window finds its bytes in the output. `size` is a power of two
// of at least kMinBytes (a flush plus the longest match); `bytes` null: no window.
struct InflateWindow {
  static constexpr uint32_t kFlushBytes = 4096;
  static constexpr uint32_t kMinBytes = 8192;
  uint8_t* bytes = nullptr;
  uint32_t size = 0;

  ZARRD_HD bool Valid() const { return size >= kMinBytes && (size & (size - 1)) == 0; }
  // Where the output's byte at `position` sits while it is among the last `size`.
  ZARRD_HD uint8_t& At(uint64_t position) const { return bytes[position & (size - 1)]; }
};

namespace inflate {
ZARRD_HD inline bool BuildFixed(InflateWorkspace* ws) {
  uint8_t* l = ws->lengths;
  for (uint32_t s = 0; s < 288; ++s) l[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
  for (uint32_t s = 0; s < 32; ++s) l[288 + s] = 5;
  return Build(&ws->lit, Code::kLitLen, l, 288) && Build(&ws->dist, Code::kDistance, l + 288, 32);
}

ZARRD_HD inline DecodeError BuildDynamic(InflateWorkspace* ws, BitReader* br) {
  constexpr uint8_t kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  const uint32_t nlen = br->Get(5) + 257, ndist = br->Get(5) + 1, ncode = br->Get(4) + 4;
  if (nlen > 286 || ndist > 30) return DecodeError::kCorrupt;
  uint8_t* l = ws->lengths;
  for (uint32_t i = 0; i < 19; ++i) l[kOrder[i]] = i < ncode ? br->Get(3) : 0;
  if (br->Overrun()) return DecodeError::kTruncated;
  if (!Build(&ws->lit, Code::kCodeLengths, l, 19)) return DecodeError::kCorrupt;
  for (uint32_t i = 0; i < nlen + ndist;) {
    const uint32_t e = Decode(ws->lit, br);
    if (br->Overrun()) return DecodeError::kTruncated;
    if (entry::KindOf(e) == entry::kInvalid) return DecodeError::kCorrupt;
    const uint32_t sym = entry::Value(e);
    if (sym < 16) {
      l[i++] = static_cast<uint8_t>(sym);
      continue;
    }
    uint8_t value = 0;
    uint32_t repeat;
    if (sym == 16) {
      if (i == 0) return DecodeError::kCorrupt;
      value = l[i - 1];
      repeat = 3 + br->Get(2);
    } else if (sym == 17) {
      repeat = 3 + br->Get(3);
    } else {
      repeat = 11 + br->Get(7);
    }
    if (br->Overrun()) return DecodeError::kTruncated;
    if (repeat > nlen + ndist - i) return DecodeError::kCorrupt;
    while (repeat-- > 0) l[i++] = value;
  }
  if (l[256] == 0) return DecodeError::kCorrupt;  // no end-of-block code
  if (!Build(&ws->lit, Code::kLitLen, l, nlen) ||
      !Build(&ws->dist, Code::kDistance, l + nlen, ndist)) {
    return DecodeError::kCorrupt;
  }
  return DecodeError::kOk;
}

// What lane 0's parser hands all lanes: a match or a stored block to copy (without a window),
// window bytes to move to the output, or the end.
struct Step {
  enum Kind : uint32_t { kMatch, kStored, kFlush, kEnd };
  uint32_t kind = kEnd;
  // The bytes to copy; kEnd: the DecodeError.
  uint32_t len = 0;
  // kMatch: the distance back; kStored: the offset in the input; kEnd: the bytes read.
  uint64_t from = 0;
  // Where the copy goes in the output; kFlush, kEnd: the bytes written.
  uint64_t op = 0;
};

template <typename Lanes>
ZARRD_HD inline uint64_t Broadcast64(const Lanes& lanes, uint64_t v) {
  return lanes.Broadcast(static_cast<uint32_t>(v)) |
         uint64_t{lanes.Broadcast(static_cast<uint32_t>(v >> 32))} << 32;
}

template <typename Lanes>
ZARRD_HD inline Step BroadcastStep(const Lanes& lanes, const Step& s) {
  Step b;
  b.kind = lanes.Broadcast(s.kind);
  b.len = lanes.Broadcast(s.len);
  b.from = Broadcast64(lanes, s.from);
  b.op = Broadcast64(lanes, s.op);
  return b;
}

// Lane 0's state: the bit reader, the block being read and the output written so far. Without
// a window it writes literals to the output and hands each match and stored block to the lanes;
// with one it writes everything into the window and hands the lanes the bytes to move out.
class Parser {
 public:
  ZARRD_HD Parser(const uint8_t* src, uint64_t src_size, uint8_t* dst, uint64_t dst_size,
                  InflateWorkspace* ws, InflateWindow window)
      : br_(src, src_size),
        src_(src),
        src_size_(src_size),
        dst_(dst),
        dst_size_(dst_size),
        ws_(ws),
        window_(window) {}

  ZARRD_HD Step Next() {
    for (;;) {
      if (FlushDue()) return Flush();
      if (stored_left_ != 0) {
        CopyStoredPiece();
        continue;
      }
      if (!in_codes_) {
        if (last_) return End(DecodeError::kOk);
        last_ = br_.Get(1) != 0;
        const uint32_t type = br_.Get(2);
        if (br_.Overrun()) return End(DecodeError::kTruncated);
        if (type == 0) {
          const Step s = Stored();
          if (window_.bytes == nullptr || s.kind == Step::kEnd) return s;
          continue;
        }
        if (type == 1) {
          if (!BuildFixed(ws_)) return End(DecodeError::kCorrupt);
        } else if (type == 2) {
          const DecodeError e = BuildDynamic(ws_, &br_);
          if (e != DecodeError::kOk) return End(e);
        } else {
          return End(DecodeError::kCorrupt);
        }
        in_codes_ = true;
      }
      for (;;) {
        if (FlushDue()) return Flush();
        const uint32_t e = Decode(ws_->lit, &br_);
        if (br_.Overrun()) return End(DecodeError::kTruncated);
        const entry::Kind kind = entry::KindOf(e);
        if (kind == entry::kLiteral) {
          if (op_ >= dst_size_) return End(DecodeError::kOutputOverrun);
          const auto literal = static_cast<uint8_t>(entry::Value(e));
          if (window_.bytes != nullptr) {
            window_.At(op_++) = literal;
          } else {
            dst_[op_++] = literal;
          }
          continue;
        }
        if (kind == entry::kEnd) break;
        if (kind == entry::kInvalid) return End(DecodeError::kCorrupt);
        const Step s = Match(entry::Value(e) + br_.Take(entry::Extra(e)));
        if (window_.bytes == nullptr || s.kind == Step::kEnd) return s;
      }
      in_codes_ = false;
    }
  }

 private:
  ZARRD_HD Step End(DecodeError e) {
    Step s;
    s.kind = Step::kEnd;
    s.len = static_cast<uint32_t>(e);
    s.from = (br_.used + 7) / 8;
    s.op = op_;
    return s;
  }

  ZARRD_HD bool FlushDue() const {
    return window_.bytes != nullptr && op_ - flushed_ >= InflateWindow::kFlushBytes;
  }

  // The window's bytes since the last flush, for the lanes to move to the output.
  ZARRD_HD Step Flush() {
    Step s;
    s.kind = Step::kFlush;
    s.op = op_;
    flushed_ = op_;
    return s;
  }

  // Up to the next flush of a stored block's bytes into the window.
  ZARRD_HD void CopyStoredPiece() {
    const uint64_t room = InflateWindow::kFlushBytes - (op_ - flushed_);
    const uint32_t n = stored_left_ < room ? stored_left_ : static_cast<uint32_t>(room);
    for (uint32_t i = 0; i < n; ++i) window_.At(op_ + i) = src_[stored_at_ + i];
    op_ += n;
    stored_at_ += n;
    stored_left_ -= n;
  }

  // With a window the copy happens here (a stored block's piece by piece); the step only says
  // that it did.
  ZARRD_HD Step Copy(uint32_t kind, uint32_t len, uint64_t from) {
    if (window_.bytes != nullptr) {
      if (kind == Step::kStored) {
        stored_left_ = len;
        stored_at_ = from;
      } else {
        const uint64_t back = op_ - from;
        if (from >= window_.size) {  // past the window: in the output since the last flush
          for (uint32_t i = 0; i < len; ++i) window_.At(op_ + i) = dst_[back + i];
        } else {
          for (uint32_t i = 0; i < len; ++i) window_.At(op_ + i) = window_.At(back + i);
        }
        op_ += len;
      }
      Step s;
      s.kind = kind;
      return s;
    }
    Step s;
    s.kind = kind;
    s.len = len;
    s.from = from;
    s.op = op_;
    op_ += len;
    return s;
  }

  ZARRD_HD Step Stored() {
    const uint64_t at = br_.AlignToByte();
    if (at > src_size_ || src_size_ - at < 4) return End(DecodeError::kTruncated);
    const uint32_t len = src_[at] | src_[at + 1] << 8;
    const uint32_t nlen = src_[at + 2] | src_[at + 3] << 8;
    if ((len ^ 0xffffu) != nlen) return End(DecodeError::kCorrupt);
    if (len > src_size_ - at - 4) return End(DecodeError::kTruncated);
    if (len > dst_size_ - op_) return End(DecodeError::kOutputOverrun);
    br_.SkipBytes(4 + len);
    return Copy(Step::kStored, len, at + 4);
  }

  // A match of `len` bytes: its distance follows.
  ZARRD_HD Step Match(uint32_t len) {
    const uint32_t e = Decode(ws_->dist, &br_);
    if (br_.Overrun()) return End(DecodeError::kTruncated);
    if (entry::KindOf(e) != entry::kBase) return End(DecodeError::kCorrupt);
    const uint64_t distance = entry::Value(e) + br_.Take(entry::Extra(e));
    if (br_.Overrun()) return End(DecodeError::kTruncated);
    if (distance > op_) return End(DecodeError::kCorrupt);
    if (len > dst_size_ - op_) return End(DecodeError::kOutputOverrun);
    return Copy(Step::kMatch, len, distance);
  }

  BitReader br_;
  const uint8_t* src_;
  uint64_t src_size_;
  uint8_t* dst_;
  uint64_t dst_size_;
  InflateWorkspace* ws_;
  InflateWindow window_;  // no bytes: copies read the output
  uint64_t op_ = 0;
  uint64_t flushed_ = 0;      // with a window: the output before this is in dst
  uint32_t stored_left_ = 0;  // with a window: a stored block's bytes still to copy, from
  uint64_t stored_at_ = 0;
  bool in_codes_ = false;
  bool last_ = false;
};
}  // namespace inflate

// Inflates the raw deflate stream at `src` into `dst`, stopping after its final block. `*consumed`
// is the input bytes the stream took (rounded up to a byte), `*written` the bytes written. Every
// lane calls it with the same arguments; only lane 0 uses `ws`. With a `window` (shared by the
// lanes) the copies read it instead of the output.
template <typename Lanes = SerialLanes>
ZARRD_HD inline DecodeError Inflate(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                    uint64_t dst_size, uint64_t* consumed, uint64_t* written,
                                    InflateWorkspace* ws, const Lanes& lanes = Lanes(),
                                    InflateWindow window = {}) {
  using inflate::Step;
  if (window.bytes != nullptr && !window.Valid()) return DecodeError::kUnsupported;
  inflate::Parser parser(src, src_size, dst, dst_size, ws, window);
  Step step;
  uint64_t flushed = 0;
  for (;;) {
    if (lanes.lane() == 0) step = parser.Next();
    step = inflate::BroadcastStep(lanes, step);
    if (step.kind == Step::kFlush || step.kind == Step::kEnd) {
      if (window.bytes != nullptr) {
        lanes.Sync();  // lane 0's window bytes, before the lanes read them
        for (uint64_t i = flushed + lanes.lane(); i < step.op; i += lanes.count()) {
          dst[i] = window.At(i);
        }
        flushed = step.op;
        lanes.Sync();  // the bytes moved out, before lane 0's matches past the window read them
      }
      if (step.kind == Step::kEnd) break;
      continue;
    }
    lanes.Sync();  // the literals lane 0 wrote and the last copy's bytes, before this copy reads
    if (step.kind == Step::kMatch) {
      LaneMatch(lanes, dst, step.op, step.from, step.len);
    } else {
      LaneCopy(lanes, dst + step.op, src + step.from, step.len);
    }
  }
  lanes.Sync();  // every lane's bytes, before any lane reads them (the checksums)
  *written = step.op;
  const auto e = static_cast<DecodeError>(step.len);
  *consumed = e == DecodeError::kOk ? step.from : 0;
  return e;
}

// A zlib stream (no preset dictionary) filling exactly `dst_size` bytes.
template <typename Lanes = SerialLanes>
ZARRD_HD inline DecodeError DecodeZlib(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                       uint64_t dst_size, uint64_t* written, InflateWorkspace* ws,
                                       const Lanes& lanes = Lanes(), InflateWindow window = {}) {
  *written = 0;
  if (src_size < 2) return DecodeError::kTruncated;
  const uint32_t cmf = src[0], flg = src[1];
  if ((cmf & 15) != 8 || (cmf >> 4) > 7 || (cmf << 8 | flg) % 31 != 0) {
    return DecodeError::kCorrupt;
  }
  if (flg & 0x20) return DecodeError::kUnsupported;  // a preset dictionary
  uint64_t consumed = 0;
  DecodeError e =
      Inflate(src + 2, src_size - 2, dst, dst_size, &consumed, written, ws, lanes, window);
  if (e != DecodeError::kOk) return e;
  const uint64_t at = 2 + consumed;
  if (src_size - at < 4) return DecodeError::kTruncated;
  if (src_size - at > 4) return DecodeError::kCorrupt;  // bytes after the stream
  const uint32_t want = uint32_t{src[at]} << 24 | uint32_t{src[at + 1]} << 16 |
                        uint32_t{src[at + 2]} << 8 | src[at + 3];
  if (LaneAdler32(lanes, dst, *written) != want) return DecodeError::kChecksum;
  return *written == dst_size ? DecodeError::kOk : DecodeError::kOutputShort;
}

// One or more gzip members whose outputs, concatenated, fill exactly `dst_size` bytes.
template <typename Lanes = SerialLanes>
ZARRD_HD inline DecodeError DecodeGzip(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                       uint64_t dst_size, uint64_t* written, InflateWorkspace* ws,
                                       const Lanes& lanes = Lanes(), InflateWindow window = {}) {
  *written = 0;
  uint64_t at = 0;
  do {
    if (src_size - at < 10) return DecodeError::kTruncated;
    const uint8_t* m = src + at;
    if (m[0] != 0x1f || m[1] != 0x8b || m[2] != 8 || (m[3] & 0xe0) != 0) {
      return DecodeError::kCorrupt;
    }
    const uint8_t flags = m[3];
    at += 10;
    if (flags & 0x04) {  // FEXTRA
      if (src_size - at < 2) return DecodeError::kTruncated;
      const uint64_t xlen = src[at] | src[at + 1] << 8;
      if (src_size - at - 2 < xlen) return DecodeError::kTruncated;
      at += 2 + xlen;
    }
    for (uint8_t field = 0x08; field <= 0x10; field <<= 1) {  // FNAME, FCOMMENT
      if (!(flags & field)) continue;
      while (at < src_size && src[at] != 0) ++at;
      if (at == src_size) return DecodeError::kTruncated;
      ++at;
    }
    if (flags & 0x02) {  // FHCRC: the low half of the header's CRC-32
      if (src_size - at < 2) return DecodeError::kTruncated;
      const uint32_t want = src[at] | src[at + 1] << 8;
      if ((Crc32(m, src + at - m) & 0xffff) != want) return DecodeError::kChecksum;
      at += 2;
    }
    uint64_t consumed = 0, out = 0;
    DecodeError e = Inflate(src + at, src_size - at, dst + *written, dst_size - *written, &consumed,
                            &out, ws, lanes, window);
    const uint8_t* member_out = dst + *written;
    *written += out;
    if (e != DecodeError::kOk) return e;
    at += consumed;
    if (src_size - at < 8) return DecodeError::kTruncated;
    const uint8_t* t = src + at;
    const uint32_t crc = t[0] | t[1] << 8 | t[2] << 16 | uint32_t{t[3]} << 24;
    const uint32_t isize = t[4] | t[5] << 8 | t[6] << 16 | uint32_t{t[7]} << 24;
    if (LaneCrc32(lanes, member_out, out) != crc || static_cast<uint32_t>(out) != isize) {
      return DecodeError::kChecksum;
    }
    at += 8;
  } while (at < src_size);
  return *written == dst_size ? DecodeError::kOk : DecodeError::kOutputShort;
}

}  // namespace zarrd::decode
