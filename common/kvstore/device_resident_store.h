// Stores whose values live in GPU memory (the GPU memory store, common/cuda/store_gpu.h): a read
// to the GPU copies a value device to device instead of through the host.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "common/kvstore/store.h"
#include "common/util/status.h"

namespace zarrd {

// A value in GPU memory; `keepalive` keeps the memory valid while a copy from it is in flight.
struct DeviceValue {
  const void* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keepalive;
};

class DeviceResidentStore {
 public:
  virtual ~DeviceResidentStore() = default;
  // The value in GPU memory, nullopt when absent; FAILED_PRECONDITION for a value the store
  // keeps on the host.
  virtual Result<std::optional<DeviceValue>> GetDevice(const std::string& key) = 0;
};

// `store` as a device-resident store; nullptr when its values live in host memory.
inline DeviceResidentStore* AsDeviceResident(Store& store) {
  return dynamic_cast<DeviceResidentStore*>(&store);
}

}  // namespace zarrd
