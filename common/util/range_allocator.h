// First-fit sub-allocation of offsets inside one fixed-size range (a GPU slab), with
// alignment and coalescing of freed neighbours. Not thread-safe: the owner locks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace zarrd {

class RangeAllocator {
 public:
  RangeAllocator(uint64_t size, uint64_t alignment);

  // The offset of `nbytes` (rounded up to the alignment), or nullopt when no free block fits.
  std::optional<uint64_t> Allocate(uint64_t nbytes);
  // Returns the block at `offset` that Allocate handed out.
  void Free(uint64_t offset);

  uint64_t size() const { return size_; }
  uint64_t bytes_in_use() const { return in_use_; }
  uint64_t largest_free_block() const;
  bool empty() const { return used_.empty(); }

 private:
  uint64_t size_, alignment_, in_use_ = 0;
  std::map<uint64_t, uint64_t> free_;  // offset -> size
  std::map<uint64_t, uint64_t> used_;  // offset -> size
};

}  // namespace zarrd
