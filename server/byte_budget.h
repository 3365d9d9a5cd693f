// A budget of bytes shared by concurrent streamed reads: a stream takes a band's bytes before it
// decodes the band and gives them back when the band's last piece has left, so the memory that
// all streams hold together stays bounded however many there are.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace zarrd::server {

class ByteBudget {
 public:
  explicit ByteBudget(uint64_t capacity) : capacity_(capacity) {}

  // Waits until `n` bytes fit, except for a caller that holds nothing yet (`first`), which gets
  // them at once: every stream makes progress, and a stalled one holds one band at most beyond
  // the budget. False when `cancelled` was set while waiting.
  bool Acquire(uint64_t n, bool first, const std::atomic<bool>& cancelled) {
    std::unique_lock lock(mutex_);
    while (!first && held_ > 0 && held_ + n > capacity_) {
      if (cancelled) return false;
      freed_.wait_for(lock, std::chrono::milliseconds(50));
    }
    held_ += n;
    return true;
  }
  void Release(uint64_t n) {
    {
      std::lock_guard lock(mutex_);
      held_ -= n;
    }
    freed_.notify_all();
  }
  uint64_t held() const {
    std::lock_guard lock(mutex_);
    return held_;
  }

 private:
  const uint64_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  uint64_t held_ = 0;
};

}  // namespace zarrd::server
