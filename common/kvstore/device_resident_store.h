// Stores whose values live in GPU memory (the GPU memory store, common/cuda/store_gpu.h): a read
// to the GPU copies a raw value device to device, and decodes an encoded one where it is, instead
// of through the host.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/kvstore/store.h"
#include "common/util/bytes.h"
#include "common/util/status.h"

namespace zarrd {

// A value in GPU memory; `keepalive` keeps the memory valid while a copy from it is in flight.
struct DeviceValue {
  const void* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keepalive;
  // A host copy of the value's first bytes: enough for a reader to tell an encoded chunk's
  // format (common/codec/gpu_decode_plan.h) without a copy from the GPU.
  static constexpr size_t kHeadBytes = 16;
  std::array<uint8_t, kHeadBytes> head_bytes{};
  ByteView head() const { return {head_bytes.data(), std::min(size, kHeadBytes)}; }
};

class DeviceResidentStore {
 public:
  virtual ~DeviceResidentStore() = default;
  // The value in GPU memory, nullopt when absent; FAILED_PRECONDITION for a value the store
  // keeps on the host.
  virtual Result<std::optional<DeviceValue>> GetDevice(const std::string& key) = 0;
  // The CUDA device (ordinal) its values are on.
  virtual int device() const = 0;
};

// `store` as a device-resident store; nullptr when its values live in host memory.
inline DeviceResidentStore* AsDeviceResident(Store& store) {
  return dynamic_cast<DeviceResidentStore*>(&store);
}

}  // namespace zarrd
