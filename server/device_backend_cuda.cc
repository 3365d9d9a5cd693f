#include <cuda_runtime.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "common/cuda/cuda_status.h"
#include "common/cuda/decode_batcher.h"
#include "common/cuda/device_info.h"
#include "common/cuda/device_pool.h"
#include "common/cuda/device_sink.h"
#include "common/cuda/device_source.h"
#include "common/cuda/host_copy.h"
#include "common/cuda/ipc.h"
#include "common/cuda/ready_events.h"
#include "common/cuda/staging.h"
#include "common/cuda/store_gpu.h"
#include "common/metadata/json_document.h"
#include "server/client_process.h"
#include "server/device_backend.h"
#include "server/leases.h"
#include "server/region_id.h"

namespace zarrd::server {
namespace {

namespace cu = ::zarrd::cuda;

struct Device {
  cu::DeviceInfo info;
  std::shared_ptr<cu::DevicePool> pool;
  std::unique_ptr<cu::StagingPool> staging;
  std::unique_ptr<cu::ReadyEvents> ready;
};

// A client's device allocation, opened here by IPC. Requests hold a reference while they use it.
struct DeviceRegion {
  std::string id;
  Device* device;
  std::shared_ptr<cu::IpcMapping> mapping;
  uint64_t offset, nbytes;
  int owner_pid;
  uint8_t* data() const { return mapping->base() + offset; }
};

// Reads in flight, answered before their results were ready, per device; beyond these a read
// waits for its result before it answers.
constexpr size_t kReadyEvents = 256;

int64_t UnixMillis(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

class CudaDeviceBackend final : public DeviceBackend {
 public:
  explicit CudaDeviceBackend(const ServerConfig& config)
      : leases_(std::chrono::milliseconds(static_cast<int64_t>(config.lease_ttl_seconds * 1000)),
                config.lease_quota_bytes),
        lease_ttl_seconds_(config.lease_ttl_seconds),
        gpu_decode_{.mode = config.gpu_decode, .min_chunks = config.gpu_decode_min_chunks},
        gpu_decode_prewarm_(config.gpu_decode_prewarm) {}

  Status AddDevice(const DeviceConfig& dc) {
    ZARRD_ASSIGN_OR_RETURN(cu::DeviceInfo info, cu::FindDevice(dc.device));
    for (const auto& d : devices_) {
      if (d->info.uuid == info.uuid) return InvalidArgument("devices: " + info.uuid + " twice");
    }
    const uint64_t capacity = dc.pool_bytes ? dc.pool_bytes : info.total_memory / 2;
    auto device = std::make_unique<Device>();
    device->info = info;
    ZARRD_ASSIGN_OR_RETURN(device->pool,
                           cu::DevicePool::Create({.device = info.ordinal,
                                                   .name = info.uuid,
                                                   .capacity_bytes = capacity,
                                                   .slab_bytes = std::min(dc.slab_bytes, capacity),
                                                   .export_ipc = true}));
    device->staging = std::make_unique<cu::StagingPool>(
        info.ordinal, 2 * std::max(2u, std::thread::hardware_concurrency()) + 2);
    if (gpu_decode_prewarm_) {
      const auto start = std::chrono::steady_clock::now();
      const Status made = cu::PrewarmBatchSlots(*device->staging);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (made.ok()) {
        spdlog::info("device {}: GPU decoding buffers made in {:.0f} ms ({} MiB pinned)", info.uuid,
                     ms, device->staging->batch_pool().pinned_bytes() >> 20);
      } else {
        spdlog::warn("device {}: gpu_decode_prewarm: {}; the buffers are made when reads need them",
                     info.uuid, made.ToString());
      }
    }
    device->ready = std::make_unique<cu::ReadyEvents>(
        info.ordinal, kReadyEvents, [uuid = info.uuid](const Status& s) {
          spdlog::error("device {}: a DEVICE read failed after it answered: {}", uuid,
                        s.ToString());
        });
    spdlog::info("device {} ({}, ordinal {}): pool of {} MiB, slabs of {} MiB", info.uuid,
                 info.name, info.ordinal, capacity >> 20, std::min(dc.slab_bytes, capacity) >> 20);
    devices_.push_back(std::move(device));
    return OkStatus();
  }

  DeviceInventory Describe() const override {
    DeviceInventory inventory{.lease_ttl_seconds = lease_ttl_seconds_};
    std::map<const Device*, uint64_t> regions;
    {
      std::lock_guard lock(regions_mutex_);
      for (const auto& [id, r] : regions_) ++regions[r->device];
    }
    for (const auto& d : devices_) {
      const cu::PoolStats s = d->pool->stats();
      const LeaseStats l = leases_.Stats(d->info.uuid);
      inventory.devices.push_back({.gpu_uuid = d->info.uuid,
                                   .name = d->info.name,
                                   .ordinal = d->info.ordinal,
                                   .total_memory = d->info.total_memory,
                                   .capacity_bytes = s.capacity_bytes,
                                   .reserved_bytes = s.reserved_bytes,
                                   .in_use_bytes = s.in_use_bytes,
                                   .leased_bytes = l.bytes,
                                   .slabs = s.slabs,
                                   .leases = l.leases,
                                   .device_regions = regions[d.get()]});
    }
    return inventory;
  }

  Result<std::shared_ptr<Store>> MakeGpuStore(const StoreConfig& config) override {
    ZARRD_ASSIGN_OR_RETURN(cu::DeviceInfo info, cu::FindDevice(config.device));
    return cu::MakeGpuStore({.name = config.name,
                             .device = info.ordinal,
                             .capacity_bytes = config.capacity_bytes,
                             .on_host = IsMetadataDocumentKey});
  }

  Result<DeviceResult> Read(const Array& array, const ResolvedSelection& selection, uint64_t nbytes,
                            const DeviceReadTarget& target, const IoOptions& io) override {
    return Deliver(
        nbytes, target,
        [&](Device& device, uint8_t* dst, std::shared_ptr<const void> hold, DeviceResult* out) {
          return ReadInto(device, array, selection, target, io, dst, std::move(hold), out);
        });
  }

  Result<bool> ReadToHost(const Array& array, const ResolvedSelection& selection,
                          MutableByteView out, std::optional<GpuDecodeMode> gpu_decode,
                          const IoOptions& io) override {
    GpuDecodePolicy policy = gpu_decode_;
    if (gpu_decode) policy.mode = *gpu_decode;
    if (devices_.empty() || out.empty() || !array.DecodesOnGpu(selection, policy)) return false;
    Device& device = *devices_.front();
    auto allocation = device.pool->Allocate(out.size());
    if (!allocation.ok()) return false;
    cu::DeviceSink sink(*device.staging, (*allocation)->data(), ItemSize(array.metadata()->dtype),
                        nullptr, policy);
    Status read = array.ReadToSink(selection, sink, io);
    // Under auto, a GPU without memory for the read's staging leaves it to the CPUs.
    if (read.code() == StatusCode::kResourceExhausted && policy.mode == GpuDecodeMode::kAuto) {
      return false;
    }
    ZARRD_RETURN_IF_ERROR(read);
    ZARRD_RETURN_IF_ERROR(cu::CopyToHost(*device.staging, (*allocation)->data(), out,
                                         io.pool ? *io.pool : ThreadPool::Default(), io.cancelled));
    return true;
  }

  Result<DeviceResult> Upload(uint64_t nbytes, const DeviceReadTarget& target,
                              const HostGather& gather) override {
    return Deliver(nbytes, target,
                   [&](Device& device, uint8_t* dst, std::shared_ptr<const void>, DeviceResult*) {
                     std::vector<uint8_t> values(nbytes);
                     ZARRD_RETURN_IF_ERROR(gather(values));
                     ZARRD_RETURN_IF_ERROR(cu::UseDevice(device.info.ordinal));
                     return cu::CudaStatus(
                         cudaMemcpy(dst, values.data(), values.size(), cudaMemcpyHostToDevice),
                         "upload of a result gathered on the host");
                   });
  }

  Result<uint64_t> Write(Array& array, const ResolvedSelection& selection,
                         const DeviceWriteSource& input, const IoOptions& io) override {
    const uint8_t* src = nullptr;
    uint64_t nbytes = 0;
    Device* device = nullptr;
    std::shared_ptr<const void> hold;
    if (input.lease_id != 0) {
      ZARRD_ASSIGN_OR_RETURN(Lease lease, leases_.Find(input.lease_id));
      ZARRD_ASSIGN_OR_RETURN(device, FindDevice(lease.device));
      src = lease.data;
      nbytes = lease.nbytes;
      hold = lease.memory;
    } else if (input.region) {
      const DeviceRegionSlice& slice = *input.region;
      ZARRD_ASSIGN_OR_RETURN(auto region, FindRegion(slice.region_id));
      ZARRD_RETURN_IF_ERROR(CheckSlice(*region, slice.offset, slice.nbytes));
      src = region->data() + slice.offset;
      nbytes = slice.nbytes;
      device = region->device;
      hold = region;
    } else {
      return InvalidArgument("a write from GPU memory names a lease or a device region");
    }
    cu::DeviceSource source(*device->staging, src, nbytes, ItemSize(array.metadata()->dtype));
    ZARRD_RETURN_IF_ERROR(array.WriteFromSource(selection, source, io));
    return nbytes;
  }

  Result<std::string> RegisterRegion(const DeviceRegionRegistration& req) override {
    ZARRD_ASSIGN_OR_RETURN(Device * device, FindDevice(req.gpu_uuid));
    if (req.ipc_handle.size() != sizeof(cu::IpcHandleBytes)) {
      return InvalidArgument("ipc_handle must be 64 bytes, got " +
                             std::to_string(req.ipc_handle.size()));
    }
    cu::IpcHandleBytes handle;
    std::copy(req.ipc_handle.begin(), req.ipc_handle.end(), handle.begin());
    auto mapping = cu::IpcMapping::Open(device->info.ordinal, handle);
    if (!mapping.ok()) {
      return InvalidArgument("device region: the IPC handle cannot be opened on " +
                             device->info.uuid + " (" + mapping.status().message() + ")");
    }
    auto region = std::make_shared<DeviceRegion>();
    region->device = device;
    region->mapping = std::move(*mapping);
    region->offset = req.handle_offset;
    region->nbytes = req.nbytes;
    region->owner_pid = req.client_pid;
    std::lock_guard lock(regions_mutex_);
    region->id = NewRegionId("dev-");
    regions_[region->id] = region;
    return region->id;
  }

  Status UnregisterRegion(const std::string& id) override {
    std::weak_ptr<DeviceRegion> gone;
    {
      std::lock_guard lock(regions_mutex_);
      auto it = regions_.find(id);
      if (it == regions_.end())
        return NotFound("device region \"" + id + "\" is not registered")
            .WithReason(reason::kDeviceRegionNotRegistered);
      gone = it->second;
      regions_.erase(it);
    }
    // Requests in flight hold the region; the mapping closes when the last one lets go.
    while (!gone.expired()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return OkStatus();
  }

  Status ReleaseLease(uint64_t id) override { return leases_.Release(id); }

  void Reap() override {
    leases_.Reap(std::chrono::system_clock::now());
    std::lock_guard lock(regions_mutex_);
    for (auto it = regions_.begin(); it != regions_.end();) {
      if (ClientExited(it->second->owner_pid)) {
        spdlog::info("device region {}: owner pid {} exited; closed", it->first,
                     it->second->owner_pid);
        it = regions_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  // Puts `nbytes` of result where `target` says (a device region, else a new leased allocation),
  // `fill` writing them at `dst` on `device`.
  using Fill = std::function<Status(Device& device, uint8_t* dst, std::shared_ptr<const void> hold,
                                    DeviceResult* out)>;
  Result<DeviceResult> Deliver(uint64_t nbytes, const DeviceReadTarget& target, const Fill& fill) {
    DeviceResult out;
    if (target.region) {
      const DeviceRegionSlice& slice = *target.region;
      ZARRD_ASSIGN_OR_RETURN(auto region, FindRegion(slice.region_id));
      if (!target.device_uuid.empty() && target.device_uuid != region->device->info.uuid) {
        return InvalidArgument("device_region " + region->id + " is on " +
                               region->device->info.uuid + ", not " + target.device_uuid);
      }
      if (slice.nbytes != nbytes) {
        return InvalidArgument("device_region.nbytes is " + std::to_string(slice.nbytes) +
                               ", the result has " + std::to_string(nbytes));
      }
      ZARRD_RETURN_IF_ERROR(CheckSlice(*region, slice.offset, nbytes));
      ZARRD_RETURN_IF_ERROR(fill(*region->device, region->data() + slice.offset, region, &out));
      out.gpu_uuid = region->device->info.uuid;
      out.offset = slice.offset;
      out.nbytes = nbytes;
      return out;
    }
    ZARRD_ASSIGN_OR_RETURN(Device * device, FindDevice(target.device_uuid));
    ZARRD_ASSIGN_OR_RETURN(auto allocation, device->pool->Allocate(nbytes));
    ZARRD_RETURN_IF_ERROR(fill(*device, allocation->data(), allocation, &out));
    ZARRD_ASSIGN_OR_RETURN(auto handle, device->pool->IpcHandle(allocation->slab_id()));
    Lease lease{.client_pid = target.client_pid,
                .data = allocation->data(),
                .nbytes = nbytes,
                .device = device->info.uuid};
    out.slab_id = allocation->slab_id();
    out.offset = allocation->offset();
    lease.memory = std::move(allocation);
    ZARRD_ASSIGN_OR_RETURN(LeaseGrant granted, leases_.Grant(std::move(lease)));
    out.gpu_uuid = device->info.uuid;
    out.ipc_handle.assign(handle.begin(), handle.end());
    out.nbytes = nbytes;
    out.lease_id = granted.id;
    out.lease_expiry_unix_ms = UnixMillis(granted.expiry);
    return out;
  }

  Result<Device*> FindDevice(const std::string& uuid) {
    if (devices_.empty()) return FailedPrecondition("no CUDA device is served by this zarrd");
    if (uuid.empty()) return devices_.front().get();
    for (const auto& d : devices_) {
      if (d->info.uuid == uuid) return d.get();
    }
    return NotFound("device " + uuid + " is not served by this zarrd");
  }

  // Reads into `dst`. Asked to answer before the result is ready, it queues the work, records
  // a ready event after it for `out` and returns; `hold` (the result's memory) and the GPU
  // memory the copies read stay alive until the event completes.
  Status ReadInto(Device& device, const Array& array, const ResolvedSelection& selection,
                  const DeviceReadTarget& target, const IoOptions& io, uint8_t* dst,
                  std::shared_ptr<const void> hold, DeviceResult* out) {
    cu::ReadyEvent* ready = nullptr;
    if (target.answer_before_ready) {
      ZARRD_ASSIGN_OR_RETURN(ready, device.ready->Acquire());
    }
    GpuDecodePolicy policy = gpu_decode_;
    if (target.gpu_decode) policy.mode = *target.gpu_decode;
    cu::DeviceSink sink(*device.staging, dst, ItemSize(array.metadata()->dtype),
                        ready ? ready->stream : nullptr, policy);
    Status read = array.ReadToSink(selection, sink, io);
    if (ready == nullptr) return read;
    if (!read.ok()) {
      (void)device.ready->Abandon(ready);
      return read;
    }
    auto held = sink.TakeHeld();
    held.push_back(std::move(hold));
    ZARRD_RETURN_IF_ERROR(device.ready->Record(ready, std::move(held)));
    out->ready_event_id = ready->id;
    out->ready_event_handle.assign(ready->handle.begin(), ready->handle.end());
    return OkStatus();
  }

  Result<std::shared_ptr<DeviceRegion>> FindRegion(const std::string& id) {
    std::lock_guard lock(regions_mutex_);
    auto it = regions_.find(id);
    if (it == regions_.end())
      return NotFound("device region \"" + id + "\" is not registered")
          .WithReason(reason::kDeviceRegionNotRegistered);
    return it->second;
  }

  static Status CheckSlice(const DeviceRegion& region, uint64_t offset, uint64_t nbytes) {
    if (offset > region.nbytes || nbytes > region.nbytes - offset) {
      return InvalidArgument("device region " + region.id + " holds " +
                             std::to_string(region.nbytes) + " bytes; [" + std::to_string(offset) +
                             ", +" + std::to_string(nbytes) + ") does not fit");
    }
    return OkStatus();
  }

  std::vector<std::unique_ptr<Device>> devices_;
  LeaseRegistry leases_;
  const double lease_ttl_seconds_;
  const GpuDecodePolicy gpu_decode_;
  const bool gpu_decode_prewarm_;
  mutable std::mutex regions_mutex_;
  std::map<std::string, std::shared_ptr<DeviceRegion>> regions_;
};

}  // namespace

Result<std::unique_ptr<DeviceBackend>> MakeDeviceBackend(const ServerConfig& config) {
  auto visible = cu::ListDevices();
  const bool needs_gpu = (config.devices && !config.devices->empty()) ||
                         std::any_of(config.stores.begin(), config.stores.end(),
                                     [](const StoreConfig& s) { return s.kind == "gpu"; });
  if (!visible.ok()) {
    if (needs_gpu) return visible.status().WithContext("the config names GPUs");
    spdlog::info("DEVICE results are off: {}", visible.status().message());
    return MakeNoDeviceBackend(visible.status().message());
  }
  auto backend = std::make_unique<CudaDeviceBackend>(config);
  spdlog::info(
      "gpu_decode {}: DEVICE reads decode {}", GpuDecodeModeName(config.gpu_decode),
      config.gpu_decode == GpuDecodeMode::kAlways
          ? "on the GPU where its kernels can"
          : "on the GPU for zstd and blosc reads of at least gpu_decode_min_chunks chunks (auto)");
  if (config.devices) {
    for (const auto& dc : *config.devices) ZARRD_RETURN_IF_ERROR(backend->AddDevice(dc));
  } else {
    for (const auto& d : *visible) {
      ZARRD_RETURN_IF_ERROR(backend->AddDevice({.device = d.uuid}));
    }
  }
  return std::unique_ptr<DeviceBackend>(std::move(backend));
}

}  // namespace zarrd::server
