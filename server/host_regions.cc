#include "server/host_regions.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "server/client_process.h"
#include "server/region_id.h"

namespace zarrd::server {

HostRegion::~HostRegion() { ::munmap(data_, size_); }

Result<MutableByteView> HostRegion::Slice(uint64_t offset, uint64_t nbytes) const {
  if (offset > size_ || nbytes > size_ - offset) {
    return InvalidArgument("host region " + id_ + " (" + shm_name_ + ", " + std::to_string(size_) +
                           " bytes) is too small for [" + std::to_string(offset) + ", +" +
                           std::to_string(nbytes) + ")");
  }
  return MutableByteView(data_ + offset, nbytes);
}

Result<std::shared_ptr<HostRegion>> HostRegionRegistry::Register(const std::string& shm_name,
                                                                 uint64_t nbytes, int owner_pid) {
  if (shm_name.size() < 2 || shm_name[0] != '/' || shm_name.find('/', 1) != std::string::npos ||
      shm_name.find('\0') != std::string::npos) {
    return InvalidArgument("shm_name \"" + shm_name + "\": expected \"/name\" without other '/'");
  }
  int fd = ::shm_open(shm_name.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
  if (fd < 0) return ErrnoStatus(errno, "shared memory " + shm_name);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus(err, "shared memory " + shm_name);
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    return PermissionDenied("shared memory " + shm_name + " belongs to uid " +
                            std::to_string(st.st_uid) + ", not to the server's uid " +
                            std::to_string(::geteuid()));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (nbytes == 0) nbytes = size;
  if (nbytes > size || nbytes == 0) {
    ::close(fd);
    return InvalidArgument("shared memory " + shm_name + " holds " + std::to_string(size) +
                           " bytes, " + std::to_string(nbytes) + " were registered");
  }
  void* data = ::mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  ::close(fd);
  if (data == MAP_FAILED) return ErrnoStatus(err, "mmap of shared memory " + shm_name);
  std::string id = NewRegionId("host-");
  std::lock_guard lock(mutex_);
  auto region =
      std::make_shared<HostRegion>(id, shm_name, static_cast<uint8_t*>(data), nbytes, owner_pid);
  regions_[id] = region;
  return region;
}

Status HostRegionRegistry::Unregister(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (regions_.erase(id) == 0) return NotFound("host region \"" + id + "\" is not registered");
  return OkStatus();
}

Result<std::shared_ptr<HostRegion>> HostRegionRegistry::Find(const std::string& id) const {
  std::lock_guard lock(mutex_);
  auto it = regions_.find(id);
  if (it == regions_.end()) return NotFound("host region \"" + id + "\" is not registered");
  return it->second;
}

size_t HostRegionRegistry::count() const {
  std::lock_guard lock(mutex_);
  return regions_.size();
}

size_t HostRegionRegistry::ReapOrphans() {
  std::vector<std::shared_ptr<HostRegion>> orphans;
  {
    std::lock_guard lock(mutex_);
    for (auto it = regions_.begin(); it != regions_.end();) {
      const int pid = it->second->owner_pid();
      if (ClientExited(pid)) {
        orphans.push_back(it->second);
        it = regions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& r : orphans) {
    spdlog::info("host region {} ({}): owner pid {} exited; dropped", r->id(), r->shm_name(),
                 r->owner_pid());
    ::shm_unlink(r->shm_name().c_str());
  }
  return orphans.size();
}

}  // namespace zarrd::server
