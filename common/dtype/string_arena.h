// The strings of a read or write of a string array. The engine keeps its fixed-size element
// model: each element is an 8-byte handle, the address of a std::string that outlives the
// request (one of this arena's, or an interned one that the metadata holds: fill values,
// categorize labels). Chunk gathers and scatters move handles; codecs make and resolve them; the
// server turns a result's handles into its wire form. A null handle reads as the empty string.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/status.h"

namespace zarrd {

inline constexpr size_t kStringHandleSize = 8;

inline void StoreStringHandle(uint8_t* p, const std::string* s) {
  static_assert(sizeof(s) == kStringHandleSize);
  std::memcpy(p, &s, kStringHandleSize);
}

inline const std::string& LoadStringHandle(const uint8_t* p) {
  static const std::string kEmpty;
  const std::string* s;
  std::memcpy(&s, p, kStringHandleSize);
  return s ? *s : kEmpty;
}

// A string kept while anything holds it, the same one for equal texts meanwhile: fill values and
// labels, which arrays' metadata holds as handles and keeps alive with these references.
using SharedString = std::shared_ptr<const std::string>;
SharedString InternString(std::string_view text);

class StringArena {
 public:
  // `budget`: the most memory the kept strings may take, their std::string objects included
  // (`budget_name` names it in the error). A request's strings are whole chunks' strings, however
  // few of them its selection takes, so without a budget they are bounded only by the array.
  explicit StringArena(uint64_t budget = UINT64_MAX, std::string budget_name = "");
  StringArena(const StringArena&) = delete;
  StringArena& operator=(const StringArena&) = delete;

  // Keeps `strings` (one chunk's, say) and writes their handles to out[0..size) in order. One
  // lock a call, whatever the count. RESOURCE_EXHAUSTED, keeping none of them, past the budget.
  Status Adopt(std::vector<std::string> strings, uint8_t* out);
  // The memory `count` strings of `content` bytes in all take kept here.
  static uint64_t MemoryOf(uint64_t count, uint64_t content) {
    return sizeof(std::vector<std::string>) + count * sizeof(std::string) + content;
  }
  // RESOURCE_EXHAUSTED unless `bytes` more fit the budget: for callers about to build many
  // strings, before they build them.
  Status Fits(uint64_t bytes) const;
  // The memory the strings kept so far take (their bytes and their std::string objects).
  uint64_t bytes() const;

 private:
  Status Exceeded(uint64_t total) const;

  const uint64_t budget_;
  const std::string budget_name_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<std::vector<std::string>>> blocks_;
  uint64_t bytes_ = 0;
};

}  // namespace zarrd
