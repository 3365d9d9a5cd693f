// Key-value stores that hold Zarr metadata documents and chunks.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/byte_range.h"
#include "common/util/bytes.h"
#include "common/util/status.h"

namespace zarrd {

// A key-value store. Users that lock keys or nodes share the store through one StoreHandle
// (common/kvstore/store_handle.h).
class Store {
 public:
  virtual ~Store() = default;

  // Reads a value into `out` (reusing its capacity). Returns false when the key is absent.
  virtual Result<bool> Get(const std::string& key, Bytes* out) = 0;
  // Get, but a value larger than `max_bytes` is DATA_LOSS naming the key, before it is read.
  virtual Result<bool> GetBounded(const std::string& key, uint64_t max_bytes, Bytes* out);
  // Reads a value into `dst` when it holds exactly dst.size() bytes, and returns its size:
  // nullopt when the key is absent; another size reads nothing. Raw chunks go straight into
  // their place in a host result (or its staging) this way.
  virtual Result<std::optional<uint64_t>> GetExact(const std::string& key, MutableByteView dst);
  // Reads a range; a range past the end of the value is DATA_LOSS (a corrupt reference).
  virtual Result<bool> GetRange(const std::string& key, ByteRange range, Bytes* out) = 0;
  // Replaces the value atomically: readers see the old or the new value, never a mix.
  virtual Status Set(const std::string& key, ByteView value) = 0;
  // Absent keys are not an error.
  virtual Status Delete(const std::string& key) = 0;
  // Every key that starts with `prefix` ("" lists all), sorted.
  virtual Result<std::vector<std::string>> List(const std::string& prefix) = 0;
  // Deletes every key under `prefix` (which must be empty or end in '/').
  virtual Status DeletePrefix(const std::string& prefix);
  virtual std::string Describe() const = 0;
  // Removes what writers that crashed left behind (local stores: temporary files of processes
  // that are gone); returns how many. Keys are never affected.
  virtual Result<size_t> RemoveStaleTemporaries() { return size_t{0}; }
};

// DATA_LOSS: the value `where` names is larger than a value there may be.
Status OversizedValue(const std::string& where, uint64_t size, uint64_t max_bytes);
// The offset of `range` in a value of `size` bytes; DATA_LOSS naming `where` when it does not fit.
Result<uint64_t> RangeOffset(ByteRange range, uint64_t size, const std::string& where);

namespace internal {

// The values of an in-memory store (host or GPU), by key, in shards each behind a
// reader-writer lock (a parallel read looks up every chunk at once; one lock would be the
// contended line). Values are shared pointers, so a reader keeps the one it found while a writer
// replaces it.
template <typename Value>
class KeyedValues {
 public:
  std::shared_ptr<const Value> Find(const std::string& key) const {
    const Shard& shard = ShardOf(key);
    std::shared_lock lock(shard.mutex);
    auto it = shard.values.find(key);
    return it == shard.values.end() ? nullptr : it->second;
  }
  void Put(const std::string& key, std::shared_ptr<const Value> value) {
    Shard& shard = ShardOf(key);
    std::unique_lock lock(shard.mutex);
    shard.values[key] = std::move(value);
  }
  void Erase(const std::string& key) {
    Shard& shard = ShardOf(key);
    std::unique_lock lock(shard.mutex);
    shard.values.erase(key);
  }
  // The keys that start with `prefix`, in order.
  std::vector<std::string> Keys(const std::string& prefix) const {
    std::vector<std::string> keys;
    for (const Shard& shard : shards_) {
      std::shared_lock lock(shard.mutex);
      for (auto it = shard.values.lower_bound(prefix); it != shard.values.end(); ++it) {
        if (it->first.compare(0, prefix.size(), prefix) != 0) break;
        keys.push_back(it->first);
      }
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  }

 private:
  static constexpr size_t kShards = 64;
  struct alignas(64) Shard {
    mutable std::shared_mutex mutex;
    std::map<std::string, std::shared_ptr<const Value>> values;
  };
  Shard& ShardOf(const std::string& key) {
    return shards_[std::hash<std::string>{}(key) % kShards];
  }
  const Shard& ShardOf(const std::string& key) const {
    return shards_[std::hash<std::string>{}(key) % kShards];
  }
  std::array<Shard, kShards> shards_;
};

}  // namespace internal

// Keys are '/'-separated relative paths: no empty, "." or ".." parts, no NUL, no leading '/', at
// most kMaxKeyBytes. Errors show at most kMaxKeyShown bytes of a key.
inline constexpr size_t kMaxKeyBytes = 4000;
inline constexpr size_t kMaxKeyShown = 200;
Status ValidateKey(std::string_view key);
// Joins a node path and a key below it ("" path means the store root).
std::string JoinKey(std::string_view path, std::string_view key);

std::shared_ptr<Store> MakeMemoryStore();

struct LocalStoreOptions {
  // fsync files and their directory on every Set (survives power loss, not only crashes).
  bool fsync = false;
};
// A directory; created when missing. Keys cannot reach outside it, through symlinks neither.
Result<std::shared_ptr<Store>> OpenLocalStore(const std::string& root,
                                              LocalStoreOptions options = {});

}  // namespace zarrd
