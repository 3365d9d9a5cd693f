// The GPU side of the service: device pools, DEVICE reads, leases, registered device regions
// and GPU memory stores. Built over common/cuda/ when CUDA is found (device_backend_cuda.cc);
// otherwise, and on machines without a GPU, every call is FAILED_PRECONDITION "no CUDA device".
// It speaks in the plain types below; the service translates the wire's messages
// (device_wire.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/array/array.h"
#include "server/config.h"

namespace zarrd::server {

// Bytes [offset, offset + nbytes) of a registered device region.
struct DeviceRegionSlice {
  std::string region_id;
  uint64_t offset = 0;
  uint64_t nbytes = 0;
};

struct DeviceReadTarget {
  std::string device_uuid;  // "" for the first device; must match the region's when both given
  int client_pid = 0;       // the lease's owner, when the result goes to a new allocation
  std::optional<DeviceRegionSlice> region;  // else a new pool allocation leased to client_pid
  bool answer_before_ready = false;         // answer once the work is queued, with a ready event
  std::optional<GpuDecodeMode> gpu_decode;  // replaces the server's gpu_decode mode
};

// Where a DEVICE result is, as the client maps it.
struct DeviceResult {
  std::string gpu_uuid;
  uint64_t slab_id = 0;
  std::string ipc_handle;  // of the slab (a new allocation only)
  uint64_t offset = 0;
  uint64_t nbytes = 0;
  uint64_t lease_id = 0;  // 0 when the result went to a device region
  int64_t lease_expiry_unix_ms = 0;
  uint64_t ready_event_id = 0;
  std::string ready_event_handle;  // set when the answer comes before the result is ready
};

// The GPU memory a write's input is in: a lease, else a device region.
struct DeviceWriteSource {
  uint64_t lease_id = 0;
  std::optional<DeviceRegionSlice> region;
};

struct DeviceRegionRegistration {
  std::string gpu_uuid;
  std::string ipc_handle;  // cudaIpcMemHandle_t, 64 bytes
  uint64_t handle_offset = 0;
  uint64_t nbytes = 0;
  int client_pid = 0;
};

struct DevicePoolState {
  std::string gpu_uuid, name;
  int ordinal = 0;
  uint64_t total_memory = 0;
  uint64_t capacity_bytes = 0, reserved_bytes = 0, in_use_bytes = 0, leased_bytes = 0;
  uint64_t slabs = 0, leases = 0, device_regions = 0;
};

struct DeviceInventory {
  double lease_ttl_seconds = 0;
  std::vector<DevicePoolState> devices;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // Devices and their pools, for ServerInfo and the metrics.
  virtual DeviceInventory Describe() const = 0;
  // The store of a config entry of kind "gpu".
  virtual Result<std::shared_ptr<Store>> MakeGpuStore(const StoreConfig& config) = 0;
  // Reads `selection` of `array` (`nbytes` of result) into GPU memory as `target` says.
  virtual Result<DeviceResult> Read(const Array& array, const ResolvedSelection& selection,
                                    uint64_t nbytes, const DeviceReadTarget& target,
                                    const IoOptions& io) = 0;
  // A DEVICE result of `nbytes` of values gathered on the host (orthogonal, point and mask
  // selections): `gather` fills a host buffer once the GPU memory is held, then it is copied there.
  using HostGather = std::function<Status(MutableByteView)>;
  virtual Result<DeviceResult> Upload(uint64_t nbytes, const DeviceReadTarget& target,
                                      const HostGather& gather) = 0;
  // A HOST result decoded on the GPU and copied back into `out` (its nbytes), when the policy
  // (`gpu_decode`, the array's override, else the server's) sends the read there, as for a
  // DEVICE result: true when done; false, with `out` untouched, otherwise (no device, a chain or
  // a read the policy leaves on the CPUs, no pool room for the result, under auto no GPU memory
  // for the read's staging), so the CPUs read it.
  virtual Result<bool> ReadToHost(const Array& array, const ResolvedSelection& selection,
                                  MutableByteView out, std::optional<GpuDecodeMode> gpu_decode,
                                  const IoOptions& io) = 0;
  // Writes `selection` of `array` from GPU memory; returns the bytes written.
  virtual Result<uint64_t> Write(Array& array, const ResolvedSelection& selection,
                                 const DeviceWriteSource& source, const IoOptions& io) = 0;
  virtual Result<std::string> RegisterRegion(const DeviceRegionRegistration& registration) = 0;
  // Returns once requests in flight on the region have finished.
  virtual Status UnregisterRegion(const std::string& id) = 0;
  virtual Status ReleaseLease(uint64_t id) = 0;
  // Ends expired leases, and the leases and regions of client processes that exited.
  virtual void Reap() = 0;
};

// Opens the configured devices (creating their CUDA contexts and first slabs now, not on the
// first request). Without CUDA or a GPU, a backend that refuses every call, unless the config
// names devices or GPU stores, which is an error.
Result<std::unique_ptr<DeviceBackend>> MakeDeviceBackend(const ServerConfig& config);

// The backend for builds and machines with no GPU.
std::unique_ptr<DeviceBackend> MakeNoDeviceBackend(std::string why);

}  // namespace zarrd::server
