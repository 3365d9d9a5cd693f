#include "server/array_cache.h"

namespace zarrd::server {

Result<NamedStore*> ArrayCache::FindStore(const std::string& name, bool for_write) {
  auto it = stores_.find(name);
  if (it == stores_.end()) return NotFound("store \"" + name + "\" is not configured");
  if (for_write && it->second.config.read_only) {
    return PermissionDenied("store \"" + name + "\" is read-only");
  }
  return &it->second;
}

Status ArrayCache::CheckChunkLimit(const ArrayMetadata& m, const std::string& where) const {
  const size_t bytes = m.chunk_spec().num_bytes();
  if (bytes <= max_chunk_bytes_) return OkStatus();
  return InvalidArgument(where + ": one chunk holds " + std::to_string(bytes) +
                         " bytes decoded, over the server's max_chunk_bytes (" +
                         std::to_string(max_chunk_bytes_) + ")");
}

std::shared_ptr<Array> ArrayCache::Opened(const std::string& store, const std::string& path) {
  std::lock_guard lock(mutex_);
  auto it = arrays_.find({store, path});
  return it == arrays_.end() ? nullptr : it->second;
}

Result<std::shared_ptr<Array>> ArrayCache::Open(const std::string& store, const std::string& path) {
  if (auto array = Opened(store, path); array && !array->stale()) return array;
  ZARRD_ASSIGN_OR_RETURN(NamedStore * s, FindStore(store, false));
  ZARRD_ASSIGN_OR_RETURN(auto array, Array::Open(s->store, path));
  ZARRD_RETURN_IF_ERROR(CheckChunkLimit(*array->metadata(), "array \"" + path + "\""));
  std::lock_guard lock(mutex_);
  return arrays_[{store, path}] = array;
}

void ArrayCache::Forget(const std::string& store, const std::string& prefix) {
  std::lock_guard lock(mutex_);
  for (auto it = arrays_.begin(); it != arrays_.end();) {
    const auto& [s, p] = it->first;
    const bool below = prefix.empty() || p == prefix || p.rfind(prefix + "/", 0) == 0;
    it = s == store && below ? arrays_.erase(it) : std::next(it);
  }
}

}  // namespace zarrd::server
