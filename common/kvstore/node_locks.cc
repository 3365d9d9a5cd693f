#include "common/kvstore/node_locks.h"

#include <algorithm>
#include <functional>

namespace zarrd {

NodeLocks::RwLock::RwLock() {
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init(&attr);
  pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init(&lock_, &attr);
  pthread_rwlockattr_destroy(&attr);
}

NodeLocks::Hold::Hold(Hold&& other) noexcept
    : before_(other.before_), after_(other.after_), held_(std::move(other.held_)) {
  other.held_.clear();
}

NodeLocks::Hold::~Hold() {
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
    if (it->exclusive) {
      it->mutex->unlock();
    } else {
      it->mutex->unlock_shared();
    }
  }
}

std::vector<size_t> NodeLocks::StripesOf(std::string_view path, size_t* own) {
  auto stripe = [](std::string_view p) { return std::hash<std::string_view>{}(p) % kStripes; };
  std::vector<size_t> stripes{stripe("")};
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    stripes.push_back(stripe(path.substr(0, slash)));
  }
  if (!path.empty()) stripes.push_back(stripe(path));
  *own = stripes.back();
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  return stripes;
}

NodeLocks::Hold NodeLocks::Lock(std::string_view path, bool exclusive) {
  size_t own = 0;
  Hold hold;
  for (size_t s : StripesOf(path, &own)) {
    const bool x = exclusive && s == own;
    if (x) {
      mutexes_[s].lock();
    } else {
      mutexes_[s].lock_shared();
    }
    hold.held_.push_back({&mutexes_[s], x});
  }
  hold.before_ = hold.after_ = Generation(path);
  if (exclusive) {
    generations_[own].fetch_add(1);
    ++hold.after_;
  }
  return hold;
}

NodeLocks::Hold NodeLocks::Share(std::string_view path) { return Lock(path, false); }

NodeLocks::Hold NodeLocks::Own(std::string_view path) { return Lock(path, true); }

uint64_t NodeLocks::Generation(std::string_view path) const {
  size_t own = 0;
  uint64_t sum = 0;
  for (size_t s : StripesOf(path, &own)) sum += generations_[s].load();
  return sum;
}

}  // namespace zarrd
