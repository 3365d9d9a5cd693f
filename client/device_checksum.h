// A checksum of device memory computed on the GPU, over the little-endian 32-bit words w[i] of
// the bytes (the last one zero-padded): sum = Σ w[i], weighted = Σ (i + 1) w[i], both mod 2^64.
// numpy computes the same with uint64 arithmetic, so tests check it from a second source.
#pragma once

#include <cstdint>

#include "common/util/status.h"

namespace zarrd::client {

struct DeviceChecksum {
  uint64_t sum = 0;
  uint64_t weighted = 0;
};

Result<DeviceChecksum> ChecksumOnDevice(const void* data, uint64_t nbytes, int device);

}  // namespace zarrd::client
