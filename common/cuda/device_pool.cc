#include "common/cuda/device_pool.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {

constexpr uint64_t kAlignment = 256;
constexpr uint64_t kSlabGranularity = uint64_t{2} << 20;

namespace internal {

struct Slab {
  uint64_t id;
  uint8_t* base;
  RangeAllocator ranges;
  IpcHandleBytes handle{};
};

struct PoolState {
  PoolOptions options;
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<Slab>> slabs;
  uint64_t reserved = 0;
  uint64_t allocations = 0;

  Result<Slab*> AddSlab(uint64_t size) {
    ZARRD_RETURN_IF_ERROR(UseDevice(options.device));
    void* base = nullptr;
    ZARRD_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&base, size), "device pool " + options.name +
                                                                  ": cudaMalloc of a slab of " +
                                                                  std::to_string(size) + " bytes"));
    auto slab = std::make_unique<Slab>(
        Slab{slabs.size(), static_cast<uint8_t*>(base), RangeAllocator(size, kAlignment)});
    if (options.export_ipc) {
      cudaIpcMemHandle_t handle;
      cudaError_t err = cudaIpcGetMemHandle(&handle, base);
      if (err != cudaSuccess) {
        cudaFree(base);
        return CudaStatus(err, "device pool " + options.name + ": cudaIpcGetMemHandle");
      }
      std::copy(handle.reserved, handle.reserved + 64, slab->handle.begin());
    }
    reserved += size;
    slabs.push_back(std::move(slab));
    return slabs.back().get();
  }

  std::string Numbers() const {
    uint64_t in_use = 0, largest = 0;
    for (const auto& s : slabs) {
      in_use += s->ranges.bytes_in_use();
      largest = std::max(largest, s->ranges.largest_free_block());
    }
    return std::to_string(in_use) + " bytes in use, " + std::to_string(reserved) + " reserved in " +
           std::to_string(slabs.size()) + " slabs, capacity " +
           std::to_string(options.capacity_bytes) + ", largest free block " +
           std::to_string(largest);
  }

  ~PoolState() {
    if (slabs.empty()) return;
    cudaSetDevice(options.device);
    for (auto& s : slabs) cudaFree(s->base);
  }
};

}  // namespace internal

DeviceAllocation::~DeviceAllocation() {
  if (!pool_) return;
  std::lock_guard lock(pool_->mutex);
  pool_->slabs[slab_id_]->ranges.Free(offset_);
  --pool_->allocations;
}

int DeviceAllocation::device() const { return pool_->options.device; }

Result<std::shared_ptr<DevicePool>> DevicePool::Create(PoolOptions options) {
  auto state = std::make_shared<internal::PoolState>();
  state->options = std::move(options);
  const uint64_t first = std::min(state->options.slab_bytes, state->options.capacity_bytes);
  if (first > 0) ZARRD_RETURN_IF_ERROR(state->AddSlab(first));
  return std::shared_ptr<DevicePool>(new DevicePool(std::move(state)));
}

DevicePool::~DevicePool() = default;

Result<std::shared_ptr<DeviceAllocation>> DevicePool::Allocate(uint64_t nbytes) {
  auto& st = *state_;
  std::lock_guard lock(st.mutex);
  internal::Slab* slab = nullptr;
  std::optional<uint64_t> offset;
  for (auto& s : st.slabs) {
    offset = s->ranges.Allocate(nbytes);
    if (offset) {
      slab = s.get();
      break;
    }
  }
  if (!offset) {
    const uint64_t want =
        std::max(st.options.slab_bytes, (std::max<uint64_t>(nbytes, 1) + kSlabGranularity - 1) /
                                            kSlabGranularity * kSlabGranularity);
    if (st.reserved + want > st.options.capacity_bytes) {
      return ResourceExhausted("device pool " + st.options.name + ": cannot allocate " +
                               std::to_string(nbytes) + " bytes: " + st.Numbers());
    }
    auto added = st.AddSlab(want);
    if (!added.ok()) {
      return ResourceExhausted(added.status().message() + " (" + st.Numbers() + ")");
    }
    slab = *added;
    offset = slab->ranges.Allocate(nbytes);
  }
  std::shared_ptr<DeviceAllocation> a(new DeviceAllocation());
  a->pool_ = state_;
  a->data_ = slab->base + *offset;
  a->size_ = nbytes;
  a->slab_id_ = slab->id;
  a->offset_ = *offset;
  ++st.allocations;
  return a;
}

Result<IpcHandleBytes> DevicePool::IpcHandle(uint64_t slab_id) const {
  std::lock_guard lock(state_->mutex);
  if (!state_->options.export_ipc) return FailedPrecondition("pool exports no IPC handles");
  if (slab_id >= state_->slabs.size()) return NotFound("no slab " + std::to_string(slab_id));
  return state_->slabs[slab_id]->handle;
}

PoolStats DevicePool::stats() const {
  std::lock_guard lock(state_->mutex);
  PoolStats s;
  s.capacity_bytes = state_->options.capacity_bytes;
  s.reserved_bytes = state_->reserved;
  for (const auto& slab : state_->slabs) s.in_use_bytes += slab->ranges.bytes_in_use();
  s.slabs = state_->slabs.size();
  s.allocations = state_->allocations;
  return s;
}

int DevicePool::device() const { return state_->options.device; }
const std::string& DevicePool::name() const { return state_->options.name; }

}  // namespace zarrd::cuda
