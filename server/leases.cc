#include "server/leases.h"

#include <spdlog/spdlog.h>

#include <vector>

#include "server/client_process.h"
#include "server/region_id.h"

namespace zarrd::server {

Result<LeaseGrant> LeaseRegistry::Grant(Lease lease) {
  std::lock_guard lock(mutex_);
  uint64_t& held = bytes_by_client_[lease.client_pid];
  if (quota_bytes_ > 0 && held + lease.nbytes > quota_bytes_) {
    return ResourceExhausted("lease quota: client pid " + std::to_string(lease.client_pid) +
                             " holds " + std::to_string(held) + " bytes in leases, " +
                             std::to_string(lease.nbytes) + " more would pass the quota of " +
                             std::to_string(quota_bytes_) + " (release leases first)");
  }
  held += lease.nbytes;
  do {
    lease.id = RandomBits64();  // why random: server/region_id.h
  } while (lease.id == 0 || leases_.count(lease.id));
  lease.expiry = std::chrono::system_clock::now() + ttl_;
  const LeaseGrant grant{lease.id, lease.expiry};
  leases_[lease.id] = std::move(lease);
  return grant;
}

Status LeaseRegistry::Release(uint64_t id) {
  std::shared_ptr<void> memory;  // freed after the lock is dropped
  std::lock_guard lock(mutex_);
  auto it = leases_.find(id);
  if (it == leases_.end()) return NotFound("lease " + std::to_string(id) + " is not live");
  bytes_by_client_[it->second.client_pid] -= it->second.nbytes;
  memory = std::move(it->second.memory);
  leases_.erase(it);
  return OkStatus();
}

Result<Lease> LeaseRegistry::Find(uint64_t id) const {
  std::lock_guard lock(mutex_);
  auto it = leases_.find(id);
  if (it == leases_.end()) return NotFound("lease " + std::to_string(id) + " is not live");
  return it->second;
}

size_t LeaseRegistry::Reap(std::chrono::system_clock::time_point now) {
  std::vector<Lease> ended;
  {
    std::lock_guard lock(mutex_);
    std::map<int, bool> exited;
    for (auto it = leases_.begin(); it != leases_.end();) {
      const int pid = it->second.client_pid;
      auto [e, added] = exited.try_emplace(pid, false);
      if (added) e->second = ClientExited(pid);
      if (e->second || it->second.expiry <= now) {
        bytes_by_client_[pid] -= it->second.nbytes;
        ended.push_back(std::move(it->second));
        it = leases_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& l : ended) {
    spdlog::info(
        "lease {} ({} bytes on {}) ended: {}", l.id, l.nbytes, l.device,
        l.expiry <= now ? "expired" : "client pid " + std::to_string(l.client_pid) + " exited");
  }
  return ended.size();
}

LeaseStats LeaseRegistry::Stats(const std::string& device) const {
  std::lock_guard lock(mutex_);
  LeaseStats s;
  for (const auto& [id, l] : leases_) {
    if (l.device != device) continue;
    ++s.leases;
    s.bytes += l.nbytes;
  }
  return s;
}

}  // namespace zarrd::server
