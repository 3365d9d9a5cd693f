// The lock story of nodes against their chunks: reads and writes of an array's chunks hold the
// array's path and every ancestor shared; creating, deleting or resizing a node holds its path
// exclusive (and its ancestors shared). A delete of a group so waits for the reads and writes of
// every array below it, and a create under P waits for a create or delete of P.
#pragma once

#include <pthread.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

namespace zarrd {

class NodeLocks {
  // A reader-writer lock that lets a waiting writer in before new readers: a delete is not
  // starved by a stream of writes. Never taken twice by one thread (Lock takes each stripe once).
  class RwLock {
   public:
    RwLock();
    ~RwLock() { pthread_rwlock_destroy(&lock_); }
    RwLock(const RwLock&) = delete;
    void lock() { pthread_rwlock_wrlock(&lock_); }
    void unlock() { pthread_rwlock_unlock(&lock_); }
    void lock_shared() { pthread_rwlock_rdlock(&lock_); }
    void unlock_shared() { pthread_rwlock_unlock(&lock_); }

   private:
    pthread_rwlock_t lock_;
  };

 public:
  // Locks held until destroyed.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& other) noexcept;
    Hold& operator=(Hold&&) = delete;
    ~Hold();
    // Generation() of the path when the locks were taken, and once they are held (one more for
    // Own(): it is a change).
    uint64_t before() const { return before_; }
    uint64_t after() const { return after_; }

   private:
    friend class NodeLocks;
    uint64_t before_ = 0, after_ = 0;
    struct Held {
      RwLock* mutex;
      bool exclusive;
    };
    std::vector<Held> held_;
  };

  // Chunk reads and writes of the array at `path`.
  Hold Share(std::string_view path);
  // Creating, deleting or resizing the node at `path`; every Generation() that covers `path`
  // changes.
  Hold Own(std::string_view path);
  // Changes whenever a node at `path` or above it is owned: an Array opened at one generation
  // knows, under Share(), whether its metadata may be stale.
  uint64_t Generation(std::string_view path) const;

 private:
  static constexpr size_t kStripes = 256;
  // The stripes of `path` and its ancestors, sorted and unique: the order locks are taken in.
  static std::vector<size_t> StripesOf(std::string_view path, size_t* own);
  Hold Lock(std::string_view path, bool exclusive);

  std::array<RwLock, kStripes> mutexes_;
  std::array<std::atomic<uint64_t>, kStripes> generations_{};
};

}  // namespace zarrd
