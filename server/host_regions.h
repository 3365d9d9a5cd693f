// Registered host shared-memory regions: zarrd creates a POSIX shm object for a client, both map
// it, and the client's requests name (region, offset). Regions live until unregistered; requests in
// flight hold a reference, so the mapping outlives them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/codec/codec.h"
#include "common/util/status.h"
#include "server/client_process.h"
#include "server/guarded_mapping.h"

namespace zarrd::server {

class HostRegion {
 public:
  HostRegion(std::string id, std::string shm_name, std::unique_ptr<GuardedMapping> mapping,
             ClientIdentity owner, dev_t device, ino_t inode)
      : id_(std::move(id)),
        shm_name_(std::move(shm_name)),
        mapping_(std::move(mapping)),
        owner_(owner),
        device_(device),
        inode_(inode) {}
  // Unlinks the region's name if it still names the object zarrd created (the client normally
  // unlinked it as soon as it had mapped it).
  ~HostRegion();
  const std::string& id() const { return id_; }
  const std::string& shm_name() const { return shm_name_; }
  const ClientIdentity& owner() const { return owner_; }
  size_t size() const { return mapping_->size(); }
  // The bytes [offset, offset + nbytes), or INVALID_ARGUMENT when they do not fit.
  Result<MutableByteView> Slice(uint64_t offset, uint64_t nbytes) const;
  // FAILED_PRECONDITION once the region lost pages (see GuardedMapping::Intact).
  Status CheckIntact(bool touch) const;

 private:
  std::string id_, shm_name_;
  std::unique_ptr<GuardedMapping> mapping_;
  ClientIdentity owner_;
  dev_t device_;
  ino_t inode_;
};

// What one client (a process, see ClientIdentity) may hold registered at a time.
struct HostRegionQuota {
  size_t regions = 64;
  uint64_t bytes = uint64_t{4} << 30;
};

class HostRegionRegistry {
 public:
  explicit HostRegionRegistry(HostRegionQuota quota = {}) : quota_(quota) {}
  // Creates a POSIX shared-memory object of `nbytes` under a name zarrd makes (random, created
  // with O_EXCL and mode 0600, so it is no other process's object), allocates and maps it, and
  // registers it for the live process `client_pid`; the client maps the name and unlinks it.
  // A full /dev/shm or the client's quota is RESOURCE_EXHAUSTED.
  Result<std::shared_ptr<HostRegion>> Create(uint64_t nbytes, int client_pid);
  // Drops the regions whose owner process has exited; returns how many. The service calls it
  // periodically.
  size_t ReapOrphans();
  Status Unregister(const std::string& id);
  Result<std::shared_ptr<HostRegion>> Find(const std::string& id) const;
  // Runs `use` on the bytes [offset, offset + nbytes) of region `id`, held for the call.
  // FAILED_PRECONDITION, and the region unregistered, when it lost pages before or during the call:
  // its pages then read as zeros, so `use`'s result is void.
  Status Use(const std::string& id, uint64_t offset, uint64_t nbytes,
             const std::function<Status(MutableByteView)>& use);
  size_t count() const;

 private:
  struct Usage {
    size_t regions = 0;
    uint64_t bytes = 0;
  };
  // Books `nbytes` for `client`, or RESOURCE_EXHAUSTED over its quota.
  Status Reserve(const ClientIdentity& client, uint64_t nbytes);
  void Release(const ClientIdentity& client, uint64_t nbytes);  // under mutex_
  // The region's CheckIntact; a region that lost pages is also unregistered.
  Status CheckIntact(const HostRegion& region, bool touch);
  Result<std::shared_ptr<HostRegion>> Map(uint64_t nbytes, const ClientIdentity& client);

  const HostRegionQuota quota_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<HostRegion>> regions_;
  std::map<ClientIdentity, Usage> usage_;
};

}  // namespace zarrd::server
