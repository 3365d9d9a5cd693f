#include <cuda_runtime.h>

#include <cstdio>

#include "common/cuda/device_info.h"

namespace zarrd::cuda {
namespace {

std::string FormatUuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char s[64];
  std::snprintf(s, sizeof s,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

}  // namespace

Result<std::vector<DeviceInfo>> ListDevices() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    return FailedPrecondition(std::string("no CUDA device: ") +
                              (err != cudaSuccess ? cudaGetErrorString(err) : "none found"));
  }
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    err = cudaGetDeviceProperties(&prop, i);
    if (err != cudaSuccess) {
      return Internal("cudaGetDeviceProperties(" + std::to_string(i) +
                      "): " + cudaGetErrorString(err));
    }
    devices.push_back({i, FormatUuid(prop.uuid), prop.name,
                       static_cast<uint64_t>(prop.totalGlobalMem), prop.major, prop.minor});
  }
  return devices;
}

Result<DeviceInfo> FindDevice(const std::string& key) {
  ZARRD_ASSIGN_OR_RETURN(auto devices, ListDevices());
  for (const auto& d : devices) {
    if (d.uuid == key || d.uuid == "GPU-" + key || std::to_string(d.ordinal) == key) return d;
  }
  return NotFound("no CUDA device with UUID or ordinal \"" + key + "\" (" +
                  std::to_string(devices.size()) + " visible)");
}

}  // namespace zarrd::cuda
