// The CUDA devices this process can see, identified by UUID (ordinals differ between containers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/util/status.h"

namespace zarrd::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  std::string name;
  uint64_t total_memory = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
};

// FAILED_PRECONDITION "no CUDA device" when the driver or a device is missing.
Result<std::vector<DeviceInfo>> ListDevices();

// Finds a device by UUID ("GPU-..." or bare hex) or by ordinal ("0").
Result<DeviceInfo> FindDevice(const std::string& uuid_or_ordinal);

}  // namespace zarrd::cuda
