#include "common/dtype/string_arena.h"

#include <set>

namespace zarrd {

const std::string* InternString(std::string_view text) {
  static std::mutex mutex;
  static auto* strings = new std::set<std::string, std::less<>>;  // never destroyed
  std::lock_guard lock(mutex);
  auto it = strings->find(text);
  if (it == strings->end()) it = strings->emplace(text).first;
  return &*it;
}

void StringArena::Adopt(std::vector<std::string> strings, uint8_t* out) {
  size_t n = 0;
  for (const auto& s : strings) n += s.size();
  auto block = std::make_unique<std::vector<std::string>>(std::move(strings));
  for (size_t i = 0; i < block->size(); ++i) {
    StoreStringHandle(out + i * kStringHandleSize, &(*block)[i]);
  }
  std::lock_guard lock(mutex_);
  blocks_.push_back(std::move(block));
  bytes_ += n;
}

size_t StringArena::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace zarrd
