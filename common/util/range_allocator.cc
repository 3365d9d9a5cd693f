#include "common/util/range_allocator.h"

#include <algorithm>
#include <cassert>

namespace zarrd {

RangeAllocator::RangeAllocator(uint64_t size, uint64_t alignment)
    : size_(size), alignment_(std::max<uint64_t>(1, alignment)) {
  if (size_ > 0) free_[0] = size_;
}

std::optional<uint64_t> RangeAllocator::Allocate(uint64_t nbytes) {
  const uint64_t need = std::max<uint64_t>(1, (nbytes + alignment_ - 1) / alignment_) * alignment_;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const uint64_t offset = it->first;
    const uint64_t rest = it->second - need;
    free_.erase(it);
    if (rest > 0) free_[offset + need] = rest;
    used_[offset] = need;
    in_use_ += need;
    return offset;
  }
  return std::nullopt;
}

void RangeAllocator::Free(uint64_t offset) {
  auto used = used_.find(offset);
  assert(used != used_.end());
  if (used == used_.end()) return;
  uint64_t begin = offset, size = used->second;
  in_use_ -= size;
  used_.erase(used);
  auto next = free_.lower_bound(begin);
  if (next != free_.end() && begin + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == begin) {
      begin = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_[begin] = size;
}

uint64_t RangeAllocator::largest_free_block() const {
  uint64_t largest = 0;
  for (const auto& [offset, size] : free_) largest = std::max(largest, size);
  return largest;
}

}  // namespace zarrd
