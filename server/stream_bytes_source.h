// StreamBytes' distinct source: a buffer of distinct pages, built once for the largest stream
// asked for and shared by the streams that follow, dropped when the server is idle.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>

namespace zarrd::server {

class StreamBytesSource {
 public:
  // At least `nbytes`, filled; nullptr when `stop` said so while it was built (asked every
  // 64 MiB).
  std::shared_ptr<uint8_t[]> Get(uint64_t nbytes, const std::function<bool()>& stop) {
    std::lock_guard lock(mutex_);
    if (bytes_ < nbytes) {
      Drop(lock);
      std::shared_ptr<uint8_t[]> source(new uint8_t[nbytes]);
      for (uint64_t i = 0; i < nbytes; i += 4096) {  // every page touched, no two alike
        if (i % (64u << 20) == 0 && stop()) return nullptr;
        std::memset(source.get() + i, static_cast<int>(i >> 12),
                    std::min<uint64_t>(4096, nbytes - i));
      }
      source_ = std::move(source);
      bytes_ = nbytes;
    }
    return source_;
  }

  void Clear() {
    std::lock_guard lock(mutex_);
    Drop(lock);
  }

 private:
  void Drop(const std::lock_guard<std::mutex>&) {
    source_.reset();
    bytes_ = 0;
  }

  std::mutex mutex_;
  std::shared_ptr<uint8_t[]> source_;
  uint64_t bytes_ = 0;
};

}  // namespace zarrd::server
