// CUDA IPC: memory of another process, opened from its 64-byte handle and closed when the last
// user lets go. Opening costs milliseconds, so callers cache what they open.
#pragma once

#include <memory>

#include "common/cuda/device_pool.h"

namespace zarrd::cuda {

class IpcMapping {
 public:
  // Opens `handle` on `device`; the mapping is the whole allocation the handle names.
  static Result<std::shared_ptr<IpcMapping>> Open(int device, const IpcHandleBytes& handle);
  ~IpcMapping();
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  uint8_t* base() const { return base_; }
  int device() const { return device_; }

 private:
  IpcMapping(int device, uint8_t* base) : device_(device), base_(base) {}
  int device_;
  uint8_t* base_;
};

// The IPC handle of the allocation holding `ptr`, and `ptr`'s offset from its base.
Result<std::pair<IpcHandleBytes, uint64_t>> ExportIpc(const void* ptr);

// How many handles this process has opened (a steady state opens none).
uint64_t IpcOpenCount();

}  // namespace zarrd::cuda
