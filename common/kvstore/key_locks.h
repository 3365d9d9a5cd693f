// Locks that serialise read-modify-write of one key (a chunk or shard) among the users of a store.
#pragma once

#include <array>
#include <functional>
#include <mutex>
#include <string_view>

namespace zarrd {

class KeyLocks {
 public:
  std::unique_lock<std::mutex> Lock(std::string_view key) {
    return std::unique_lock<std::mutex>(stripes_[std::hash<std::string_view>{}(key) % kStripes]);
  }

 private:
  static constexpr size_t kStripes = 1024;
  std::array<std::mutex, kStripes> stripes_;
};

}  // namespace zarrd
