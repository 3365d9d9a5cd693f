// Leases on DEVICE results: the memory of a result stays allocated until the client releases
// the lease, the lease expires, or the client process exits. The registry owns a reference to
// the memory, so nothing a live lease holds is ever freed.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/util/status.h"

namespace zarrd::server {

struct Lease {
  uint64_t id = 0;
  int client_pid = 0;  // 0: no session; the lease ends by release or expiry only
  std::shared_ptr<void> memory;
  uint8_t* data = nullptr;
  uint64_t nbytes = 0;
  std::string device;  // the pool's device UUID
  std::chrono::system_clock::time_point expiry;
};

struct LeaseGrant {
  uint64_t id = 0;
  std::chrono::system_clock::time_point expiry;
};

struct LeaseStats {
  uint64_t leases = 0;
  uint64_t bytes = 0;
};

class LeaseRegistry {
 public:
  // `quota_bytes` (0: none) caps what one client process holds at once.
  LeaseRegistry(std::chrono::milliseconds ttl, uint64_t quota_bytes)
      : ttl_(ttl), quota_bytes_(quota_bytes) {}

  // Leases `lease.memory` (id and expiry are set here). RESOURCE_EXHAUSTED over the client's
  // quota, and the memory is dropped.
  Result<LeaseGrant> Grant(Lease lease);
  // NOT_FOUND for unknown or already ended leases.
  Status Release(uint64_t id);
  Result<Lease> Find(uint64_t id) const;
  // Ends the leases past their expiry and those of exited client processes; returns how many.
  size_t Reap(std::chrono::system_clock::time_point now);
  LeaseStats Stats(const std::string& device) const;

 private:
  const std::chrono::milliseconds ttl_;
  const uint64_t quota_bytes_;
  mutable std::mutex mutex_;
  std::map<uint64_t, Lease> leases_;
  std::map<int, uint64_t> bytes_by_client_;
};

}  // namespace zarrd::server
