// FSE (tANS) decoding tables: reading a table description (RFC 8878 4.1.1) and spreading its
// normalized counts into a decoding table. Sequence tables carry, for each state, the baseline
// and extra-bit count of its symbol; the Huffman weight table carries the symbol as baseline.
#pragma once

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/decode/zstd_bits.h"

namespace zarrd::decode::zstd {

// A decoding table entry in 32 bits (so that the sequence tables take 5 KiB of shared memory on
// the GPU): the next state less the bits read for it (9 bits), how many bits those are (4), the
// extra bits read and added to the baseline for the value (5) and the baseline shifted right by
// the extra bits (14; RFC 8878's baselines, those of match lengths less 3, lose no bits so).
struct FseEntry {
  uint32_t packed;

  ZARRD_HD static FseEntry Make(uint32_t base, uint32_t extra_bits, uint32_t nb_bits,
                                uint32_t next_state) {
    return FseEntry{next_state | nb_bits << 9 | extra_bits << 13 | (base >> extra_bits) << 18};
  }
  ZARRD_HD uint32_t next_state() const { return packed & 0x1FF; }
  ZARRD_HD uint32_t nb_bits() const { return (packed >> 9) & 15; }
  ZARRD_HD uint32_t extra_bits() const { return (packed >> 13) & 31; }
  // The symbol's baseline value (the symbol itself for Huffman weights).
  ZARRD_HD uint32_t base() const { return (packed >> 18) << extra_bits(); }
};

constexpr uint32_t kFseMinLog = 5;
constexpr uint32_t kFseMaxSymbols = 256;

// Reads the normalized counts of symbols 0..max_symbol from src. On success sets `norm`
// (max_symbol + 1 entries, -1 for "less than 1"), `log` and the bytes used.
ZARRD_HD inline DecodeError ReadFseCounts(const uint8_t* src, uint64_t size, uint32_t max_symbol,
                                          uint32_t max_log, int16_t* norm, uint32_t* log,
                                          uint64_t* used) {
  ForwardBitReader bits(src, size);
  const uint32_t accuracy = bits.Read(4) + kFseMinLog;
  if (accuracy > max_log) return DecodeError::kCorrupt;
  for (uint32_t s = 0; s <= max_symbol; ++s) norm[s] = 0;
  int32_t remaining = (1 << accuracy) + 1;
  int32_t threshold = 1 << accuracy;
  uint32_t nb_bits = accuracy + 1;
  uint32_t symbol = 0;
  bool previous_zero = false;
  for (;;) {
    if (previous_zero) {
      // Runs of zero counts: 2-bit repeat flags, 3 meaning "3 more and another flag".
      uint32_t repeat;
      do {
        repeat = bits.Read(2);
        symbol += repeat;
        if (symbol > max_symbol) return DecodeError::kCorrupt;
      } while (repeat == 3);
    }
    const int32_t max = 2 * threshold - 1 - remaining;
    int32_t count;
    const uint32_t value = bits.Peek(nb_bits);
    if (int32_t(value & uint32_t(threshold - 1)) < max) {
      count = int32_t(value & uint32_t(threshold - 1));
      bits.Skip(nb_bits - 1);
    } else {
      count = int32_t(value & uint32_t(2 * threshold - 1));
      if (count >= threshold) count -= max;
      bits.Skip(nb_bits);
    }
    --count;
    remaining -= count < 0 ? -count : count;
    norm[symbol++] = int16_t(count);
    previous_zero = count == 0;
    if (remaining < threshold) {
      if (remaining <= 1) break;
      nb_bits = HighBit32(uint32_t(remaining)) + 1;
      threshold = 1 << (nb_bits - 1);
    }
    if (symbol > max_symbol) break;
  }
  if (remaining != 1) return DecodeError::kCorrupt;
  if (bits.BytesUsed() > size) return DecodeError::kTruncated;
  *log = accuracy;
  *used = bits.BytesUsed();
  return DecodeError::kOk;
}

// Spreads counts (summing to 1 << log, as ReadFseCounts guarantees) into table[1 << log].
// `base` and `extra` map symbols to values (null: the value is the symbol); `next` is scratch of
// max_symbol + 1 entries.
ZARRD_HD inline void BuildFseTable(const int16_t* norm, uint32_t max_symbol, uint32_t log,
                                   const uint32_t* base, const uint8_t* extra, FseEntry* table,
                                   uint16_t* next) {
  const uint32_t size = 1u << log;
  int32_t high = int32_t(size) - 1;
  for (uint32_t s = 0; s <= max_symbol; ++s) {
    if (norm[s] == -1) {
      table[high--].packed = s;
      next[s] = 1;
    } else {
      next[s] = uint16_t(norm[s]);
    }
  }
  const uint32_t step = (size >> 1) + (size >> 3) + 3;
  const uint32_t mask = size - 1;
  uint32_t position = 0;
  for (uint32_t s = 0; s <= max_symbol; ++s) {
    for (int32_t i = 0; i < norm[s]; ++i) {
      table[position].packed = s;
      do {
        position = (position + step) & mask;
      } while (int32_t(position) > high);
    }
  }
  for (uint32_t u = 0; u < size; ++u) {
    const uint32_t s = table[u].packed;  // the symbol, spread above
    const uint32_t state = next[s]++;
    const uint32_t nb = log - HighBit32(state);
    table[u] = FseEntry::Make(base ? base[s] : s, extra ? extra[s] : 0, nb, (state << nb) - size);
  }
}

}  // namespace zarrd::decode::zstd
