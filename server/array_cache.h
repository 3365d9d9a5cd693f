// The configured stores by name, and the arrays opened in them: an array's metadata is read once
// and its handle shared by every request until a change makes it stale or forgets it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common/array/array.h"
#include "common/kvstore/store_handle.h"
#include "server/config.h"

namespace zarrd::server {

// A configured store; every request and open array on it shares `store`'s locks.
struct NamedStore {
  StoreConfig config;
  StoreHandle store;
};

class ArrayCache {
 public:
  ArrayCache(std::map<std::string, NamedStore> stores, uint64_t max_chunk_bytes)
      : stores_(std::move(stores)), max_chunk_bytes_(max_chunk_bytes) {}

  const std::map<std::string, NamedStore>& stores() const { return stores_; }
  // NOT_FOUND for a store that is not configured; PERMISSION_DENIED `for_write` to a read-only one.
  Result<NamedStore*> FindStore(const std::string& name, bool for_write);
  // The array, opened now unless an open handle is still current; CheckChunkLimit'ed.
  Result<std::shared_ptr<Array>> Open(const std::string& store, const std::string& path);
  // INVALID_ARGUMENT, naming `where`, when one of the array's chunks is larger than the
  // server's max_chunk_bytes.
  Status CheckChunkLimit(const ArrayMetadata& m, const std::string& where) const;
  // The array if it is open already (no store access), else nullptr.
  std::shared_ptr<Array> Opened(const std::string& store, const std::string& path);
  // Drops the handles of `store`'s arrays at or below `path_prefix` ("" for all).
  void Forget(const std::string& store, const std::string& path_prefix);

 private:
  std::map<std::string, NamedStore> stores_;
  const uint64_t max_chunk_bytes_;
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Array>> arrays_;
};

}  // namespace zarrd::server
