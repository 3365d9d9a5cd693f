// A store and the locks that every user of it shares: the key locks of read-modify-writes and
// the node locks of creates, deletes and resizes against chunk reads and writes. Make one handle
// per store, where the store is opened, and hand out copies: copies share the locks. Two handles
// made from one store would not exclude each other.
#pragma once

#include <memory>

#include "common/kvstore/key_locks.h"
#include "common/kvstore/node_locks.h"
#include "common/kvstore/store.h"

namespace zarrd {

class StoreHandle {
 public:
  explicit StoreHandle(std::shared_ptr<Store> store)
      : store_(std::move(store)), locks_(std::make_shared<Locks>()) {}

  Store& operator*() const { return *store_; }
  Store* operator->() const { return store_.get(); }
  KeyLocks& key_locks() const { return locks_->keys; }
  NodeLocks& node_locks() const { return locks_->nodes; }

 private:
  struct Locks {
    KeyLocks keys;
    NodeLocks nodes;
  };
  std::shared_ptr<Store> store_;
  std::shared_ptr<Locks> locks_;
};

}  // namespace zarrd
