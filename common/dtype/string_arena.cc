#include "common/dtype/string_arena.h"

#include <algorithm>
#include <map>

namespace zarrd {

SharedString InternString(std::string_view text) {
  // Never destroyed: strings may be released after static destructors ran.
  static auto* mutex = new std::mutex;
  static auto* table = new std::map<std::string_view, std::weak_ptr<const std::string>>;
  std::lock_guard lock(*mutex);
  auto it = table->find(text);
  if (it != table->end()) {
    if (SharedString held = it->second.lock()) return held;
    table->erase(it);  // its last holder is releasing it; the deleter leaves a newer entry alone
  }
  SharedString s(new std::string(text), [](const std::string* p) {
    {
      std::lock_guard lock(*mutex);
      auto found = table->find(*p);
      if (found != table->end() && found->first.data() == p->data()) table->erase(found);
    }
    delete p;
  });
  table->emplace(*s, s);
  return s;
}

StringArena::StringArena(uint64_t budget, std::string budget_name)
    : budget_(budget), budget_name_(std::move(budget_name)) {}

Status StringArena::Adopt(std::vector<std::string> strings, uint8_t* out) {
  uint64_t content = 0;
  for (const auto& s : strings) content += s.size();
  const uint64_t n = MemoryOf(strings.size(), content);
  auto block = std::make_unique<std::vector<std::string>>(std::move(strings));
  const std::vector<std::string>& kept =
      *block;  // its strings stay put: their addresses are handles
  {
    std::lock_guard lock(mutex_);
    if (n > budget_ - std::min(bytes_, budget_)) return Exceeded(bytes_ + n);
    bytes_ += n;
    blocks_.push_back(std::move(block));
  }
  for (size_t i = 0; i < kept.size(); ++i) StoreStringHandle(out + i * kStringHandleSize, &kept[i]);
  return OkStatus();
}

Status StringArena::Fits(uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  return bytes > budget_ - std::min(bytes_, budget_) ? Exceeded(bytes_ + bytes) : OkStatus();
}

Status StringArena::Exceeded(uint64_t total) const {
  return ResourceExhausted("the strings of this request (its input's and the chunks' it decodes, " +
                           std::to_string(total) + " bytes in memory) exceed " +
                           (budget_name_.empty() ? "the budget" : budget_name_) + " (" +
                           std::to_string(budget_) + " bytes); select fewer chunks");
}

uint64_t StringArena::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace zarrd
