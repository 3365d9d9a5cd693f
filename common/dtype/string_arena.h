// The strings of a read or write of a string array. The engine keeps its fixed-size element
// model: each element is an 8-byte handle, the address of a std::string that outlives the
// request (one of this arena's, or an interned one: fill values, categorize labels). Chunk
// gathers and scatters move handles; codecs make and resolve them; the server turns a result's
// handles into its wire form. A null handle reads as the empty string.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

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

// A string kept for the life of the process, the same address for equal strings: fill values
// and labels, which arrays' metadata holds as handles.
const std::string* InternString(std::string_view text);

class StringArena {
 public:
  StringArena() = default;
  StringArena(const StringArena&) = delete;
  StringArena& operator=(const StringArena&) = delete;

  // Keeps `strings` (one chunk's, say) and writes their handles to out[0..size) in order. One
  // lock a call, whatever the count.
  void Adopt(std::vector<std::string> strings, uint8_t* out);
  // The bytes of the strings kept so far.
  size_t bytes() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<std::vector<std::string>>> blocks_;
  size_t bytes_ = 0;
};

}  // namespace zarrd
