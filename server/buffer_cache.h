// Freed band buffers of streamed reads, kept for the next band of the same size: a fresh
// buffer of tens of MiB is mapped anew by malloc and faulted in page by page (zeroed by the
// kernel) while the decoding threads write it, which costs a large read a noticeable share of
// its CPU. At most `max_bytes` are kept; Clear (on an idle reaper tick) hands them all back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace zarrd::server {

class BufferCache {
 public:
  explicit BufferCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // A buffer of `n` bytes (contents undefined).
  std::unique_ptr<uint8_t[]> Take(size_t n) {
    {
      std::lock_guard lock(mutex_);
      for (auto it = kept_.begin(); it != kept_.end(); ++it) {
        if (it->size != n) continue;
        auto data = std::move(it->data);
        kept_.erase(it);
        kept_bytes_ -= n;
        return data;
      }
    }
    return std::unique_ptr<uint8_t[]>(new uint8_t[n]);
  }
  // Gives back a buffer of `n` bytes from Take.
  void Give(std::unique_ptr<uint8_t[]> data, size_t n) {
    std::lock_guard lock(mutex_);
    if (kept_bytes_ + n > max_bytes_) return;  // freed here
    kept_.push_back({std::move(data), n});
    kept_bytes_ += n;
  }
  void Clear() {
    std::vector<Kept> dropped;
    std::lock_guard lock(mutex_);
    dropped.swap(kept_);
    kept_bytes_ = 0;
  }
  size_t kept_bytes() const {
    std::lock_guard lock(mutex_);
    return kept_bytes_;
  }

 private:
  struct Kept {
    std::unique_ptr<uint8_t[]> data;
    size_t size;
  };
  const size_t max_bytes_;
  mutable std::mutex mutex_;
  std::vector<Kept> kept_;
  size_t kept_bytes_ = 0;
};

}  // namespace zarrd::server
