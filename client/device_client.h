// DEVICE results and device regions for the C++ client (built with CUDA). A DEVICE result is
// mapped from the server's slab by CUDA IPC; mappings are cached per (server epoch, slab), so
// steady-state reads open no handle, and a new epoch (server restart) drops the cache.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/device_checksum.h"
#include "common/cuda/ipc.h"

namespace zarrd::client {

// A DEVICE result mapped into this process. Destroying it releases its lease through its
// DeviceClient, so it must not outlive that DeviceClient.
class DeviceArray {
 public:
  ~DeviceArray();
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void* data() const { return data_; }
  uint64_t nbytes() const { return buffer_.nbytes(); }
  const pb::ArrayDescriptor& descriptor() const { return descriptor_; }
  const pb::DeviceBuffer& buffer() const { return buffer_; }
  int device() const { return mapping_->device(); }
  // Ends the lease now (the destructor does it otherwise); the memory must not be used after.
  Status Release();

 private:
  friend class DeviceClient;
  DeviceArray() = default;
  pb::Zarrd::Stub* stub_ = nullptr;
  pb::ArrayDescriptor descriptor_;
  pb::DeviceBuffer buffer_;
  std::shared_ptr<cuda::IpcMapping> mapping_;
  uint8_t* data_ = nullptr;
  bool released_ = false;
};

// A device allocation of this process registered with the server. Destroying it unregisters it.
class DeviceRegion {
 public:
  ~DeviceRegion();
  DeviceRegion(const DeviceRegion&) = delete;
  DeviceRegion& operator=(const DeviceRegion&) = delete;
  const std::string& id() const { return id_; }
  void* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  friend class DeviceClient;
  DeviceRegion() = default;
  pb::Zarrd::Stub* stub_ = nullptr;
  std::string id_;
  void* data_ = nullptr;
  uint64_t size_ = 0;
};

class DeviceClient {
 public:
  explicit DeviceClient(Client& client) : client_(client) {}

  // Reads the selection into the server's GPU memory on `gpu_uuid` ("" the server's first).
  // The result is complete when Get returns; given `ready_on`, Get returns once the server
  // answers, and the result is complete in that stream's order instead.
  Result<std::unique_ptr<DeviceArray>> Get(const std::string& store, const std::string& path,
                                           const pb::Selection& selection,
                                           const std::string& gpu_uuid = "",
                                           std::optional<cudaStream_t> ready_on = std::nullopt);
  // Writes a DEVICE result (possibly changed by this process) into a selection.
  Status SetFromArray(const std::string& store, const std::string& path,
                      const pb::Selection& selection, const DeviceArray& array);

  // Registers `nbytes` of this process's device memory at `data`.
  Result<std::unique_ptr<DeviceRegion>> RegisterRegion(void* data, uint64_t nbytes);
  Status GetInto(const std::string& store, const std::string& path, const pb::Selection& selection,
                 const DeviceRegion& region, uint64_t offset, uint64_t nbytes,
                 pb::ArrayDescriptor* descriptor = nullptr,
                 std::optional<cudaStream_t> ready_on = std::nullopt);
  Status SetFrom(const std::string& store, const std::string& path, const pb::Selection& selection,
                 const DeviceRegion& region, uint64_t offset, uint64_t nbytes);

  // On (the default), the server answers once a result's copies are queued and this client
  // waits on the result's ready event; off, the server waits before it answers.
  void set_answer_before_ready(bool on) { answer_before_ready_ = on; }

  // How many IPC handles this client has opened so far.
  uint64_t handle_opens() const;
  // How many of the server's ready events this client has opened so far.
  uint64_t ready_events_opened() const;

 private:
  Result<std::shared_ptr<cuda::IpcMapping>> Map(const pb::DeviceBuffer& buffer);
  // Waits for the result, here or on `ready_on`, when the server answered before it was
  // complete.
  Status WaitReady(const pb::DeviceBuffer& buffer, std::optional<cudaStream_t> ready_on);
  // Drops what was opened from an earlier server run; mutex_ held.
  void UseEpoch(uint64_t epoch);
  Result<int> Ordinal(const std::string& gpu_uuid);

  Client& client_;
  mutable std::mutex mutex_;
  uint64_t epoch_ = 0;
  std::map<uint64_t, std::shared_ptr<cuda::IpcMapping>> slabs_;  // by slab id, for epoch_
  std::map<std::string, int> ordinals_;
  // Ready events by id, for epoch_. Those of earlier runs are never used or destroyed again:
  // using an imported event whose exporter destroyed it is undefined.
  std::map<uint64_t, cudaEvent_t> ready_events_;
  std::vector<cudaEvent_t> stale_events_;
  uint64_t opens_ = 0;
  uint64_t ready_opens_ = 0;
  bool answer_before_ready_ = true;
};

}  // namespace zarrd::client
