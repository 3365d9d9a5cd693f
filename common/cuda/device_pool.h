// A pool of GPU memory on one device: slabs from cudaMalloc, each exported once with
// cudaIpcGetMemHandle, sub-allocated with alignment. Results handed to other processes are
// (slab, offset) pairs, so a client opens each slab's handle once. Slabs stay until the pool
// goes: a client's cached mapping of a slab is valid for the server's whole run.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/util/range_allocator.h"
#include "common/util/status.h"

namespace zarrd::cuda {

using IpcHandleBytes = std::array<char, 64>;

struct PoolOptions {
  int device = 0;
  std::string name;                             // for messages: the device UUID or the store name
  uint64_t capacity_bytes = uint64_t{8} << 30;  // slabs together never exceed this
  uint64_t slab_bytes = uint64_t{1} << 30;      // larger requests get a slab of their own size
  bool export_ipc = true;
};

struct PoolStats {
  uint64_t capacity_bytes = 0;
  uint64_t reserved_bytes = 0;  // held in slabs
  uint64_t in_use_bytes = 0;    // handed out
  uint64_t slabs = 0;
  uint64_t allocations = 0;
};

namespace internal {
struct PoolState;
}

// One sub-allocation. Its bytes go back to the pool when the last reference is dropped.
class DeviceAllocation {
 public:
  ~DeviceAllocation();
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  uint64_t slab_id() const { return slab_id_; }
  uint64_t offset() const { return offset_; }  // from the slab's base
  int device() const;

 private:
  friend class DevicePool;
  DeviceAllocation() = default;
  std::shared_ptr<internal::PoolState> pool_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0, slab_id_ = 0, offset_ = 0;
};

class DevicePool {
 public:
  // Creates the pool and its first slab (so CUDA's context exists before the first request).
  static Result<std::shared_ptr<DevicePool>> Create(PoolOptions options);
  ~DevicePool();

  // RESOURCE_EXHAUSTED, with the pool's numbers, when the capacity cannot hold `nbytes` more.
  Result<std::shared_ptr<DeviceAllocation>> Allocate(uint64_t nbytes);
  // The IPC handle of a slab (pools made with export_ipc).
  Result<IpcHandleBytes> IpcHandle(uint64_t slab_id) const;
  PoolStats stats() const;
  int device() const;
  const std::string& name() const;

 private:
  explicit DevicePool(std::shared_ptr<internal::PoolState> state) : state_(std::move(state)) {}
  std::shared_ptr<internal::PoolState> state_;
};

}  // namespace zarrd::cuda
