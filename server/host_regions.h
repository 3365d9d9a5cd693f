// Registered host shared-memory regions: a client maps a POSIX shm object, registers it once,
// and requests name (region, offset). Regions live until unregistered; requests in flight hold
// a reference, so the mapping outlives them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/codec.h"
#include "common/status.h"
#include "server/guarded_mapping.h"

namespace zarrd::server {

class HostRegion {
 public:
  HostRegion(std::string id, std::string shm_name, std::unique_ptr<GuardedMapping> mapping,
             int owner_pid)
      : id_(std::move(id)),
        shm_name_(std::move(shm_name)),
        mapping_(std::move(mapping)),
        owner_pid_(owner_pid) {}
  const std::string& id() const { return id_; }
  const std::string& shm_name() const { return shm_name_; }
  int owner_pid() const { return owner_pid_; }
  size_t size() const { return mapping_->size(); }
  // The bytes [offset, offset + nbytes), or INVALID_ARGUMENT when they do not fit.
  Result<MutableByteView> Slice(uint64_t offset, uint64_t nbytes) const;
  // FAILED_PRECONDITION once the region lost pages (see GuardedMapping::Intact).
  Status CheckIntact(bool touch) const;

 private:
  std::string id_, shm_name_;
  std::unique_ptr<GuardedMapping> mapping_;
  int owner_pid_;
};

class HostRegionRegistry {
 public:
  // Opens and maps /dev/shm/<shm_name>; it must belong to the server's user. Its pages are
  // allocated now, so a full /dev/shm is RESOURCE_EXHAUSTED here rather than a lost page later.
  Result<std::shared_ptr<HostRegion>> Register(const std::string& shm_name, uint64_t nbytes,
                                               int owner_pid);
  // Drops the regions whose owner process has exited and unlinks their shm names; returns how
  // many. The service calls it periodically.
  size_t ReapOrphans();
  Status Unregister(const std::string& id);
  Result<std::shared_ptr<HostRegion>> Find(const std::string& id) const;
  // The region's CheckIntact; a region that lost pages is also unregistered.
  Status CheckIntact(const HostRegion& region, bool touch);
  size_t count() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<HostRegion>> regions_;
};

}  // namespace zarrd::server
