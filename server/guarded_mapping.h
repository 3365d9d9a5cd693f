// A client's shared memory, mapped into zarrd, can lose its pages under it: the client may
// shrink the object it registered, and a full /dev/shm has no page to give. Touching such a page
// raises SIGBUS, which would end the daemon and every client's requests with it. A guarded
// mapping is instead replaced by private zero pages at the first such fault, and marked lost, so
// that only the request that touched it fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/util/status.h"

namespace zarrd::server {

class GuardedMapping {
 public:
  // At most this many mappings are guarded at once.
  static constexpr size_t kMaxMappings = 4096;

  // Takes ownership of the MAP_SHARED mapping [data, data + size) (unmapped on failure too).
  static Result<std::unique_ptr<GuardedMapping>> Adopt(uint8_t* data, size_t size);
  ~GuardedMapping();  // stops guarding, then unmaps
  GuardedMapping(const GuardedMapping&) = delete;
  GuardedMapping& operator=(const GuardedMapping&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // False once a page was lost. With `touch`, reads the last byte first, so that an object
  // shrunk since the last access shows now rather than halfway through a request.
  bool Intact(bool touch) const;

 private:
  GuardedMapping(uint8_t* data, size_t size, size_t slot) : data_(data), size_(size), slot_(slot) {}
  uint8_t* data_;
  size_t size_;
  size_t slot_;
};

}  // namespace zarrd::server
