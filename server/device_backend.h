// The GPU side of the service: device pools, DEVICE reads, leases, registered device regions
// and GPU memory stores. Built over common/cuda/ when CUDA is found (device_backend_cuda.cc);
// otherwise, and on machines without a GPU, every call is FAILED_PRECONDITION "no CUDA device".
#pragma once

#include <memory>
#include <string>

#include "common/array.h"
#include "server/config.h"
#include "zarrd/v1/zarrd.pb.h"

namespace zarrd::server {

namespace pb = ::zarrd::v1;

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // Devices and their pools, for ServerInfo.
  virtual void Describe(pb::ServerInfoResponse* info) const = 0;
  // The store of a config entry of kind "gpu".
  virtual Result<std::shared_ptr<Store>> MakeGpuStore(const StoreConfig& config) = 0;
  // Reads `selection` of `array` into GPU memory: into req.device_region when set, else into a
  // new pool allocation leased to req.client_pid. Fills resp->device_buffer once the result is
  // complete on the device.
  virtual Status Read(const Array& array, const ResolvedSelection& selection,
                      const pb::GetItemRequest& req, const IoOptions& io,
                      pb::GetItemResponse* resp) = 0;
  // Writes the input of a SetItem that names GPU memory (a device region or a lease) into
  // `selection` of `array`; returns the bytes written.
  virtual Result<uint64_t> Write(Array& array, const ResolvedSelection& selection,
                                 const pb::SetItemRequest& req, const IoOptions& io) = 0;
  virtual Result<std::string> RegisterRegion(const pb::RegisterDeviceRegionRequest& req) = 0;
  // Returns once requests in flight on the region have finished.
  virtual Status UnregisterRegion(const std::string& id) = 0;
  virtual Status ReleaseLease(uint64_t id) = 0;
  // Ends expired leases, and the leases and regions of client processes that exited.
  virtual void Reap() = 0;
};

// Opens the configured devices (creating their CUDA contexts and first slabs now, not on the
// first request). Without CUDA or a GPU, a backend that refuses every call, unless the config
// names devices or GPU stores, which is an error.
Result<std::unique_ptr<DeviceBackend>> MakeDeviceBackend(const ServerConfig& config,
                                                         uint64_t epoch);

// The backend for builds and machines with no GPU.
std::unique_ptr<DeviceBackend> MakeNoDeviceBackend(std::string why);

}  // namespace zarrd::server
