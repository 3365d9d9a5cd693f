// A byte range of a stored value, as stores read it and codecs that read values in parts ask for.
#pragma once

#include <cstdint>

namespace zarrd {

// [offset, offset + length), or the last `length` bytes.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool suffix = false;
  static ByteRange Prefix(uint64_t offset, uint64_t length) { return {offset, length, false}; }
  static ByteRange Suffix(uint64_t length) { return {0, length, true}; }
};

}  // namespace zarrd
