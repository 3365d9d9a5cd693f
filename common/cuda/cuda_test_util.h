// Helpers for the CUDA unit tests: skip without a GPU, copy between host and device.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "common/cuda/device_info.h"

#define ZARRD_REQUIRE_GPU()                                                 \
  do {                                                                      \
    auto zarrd_devices_ = ::zarrd::cuda::ListDevices();                     \
    if (!zarrd_devices_.ok())                                               \
      GTEST_SKIP() << "needs a GPU: " << zarrd_devices_.status().message(); \
  } while (0)

namespace zarrd::cuda::testing {

template <typename T>
std::vector<T> ToHost(const void* device, size_t count) {
  std::vector<T> out(count);
  EXPECT_EQ(cudaMemcpy(out.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

}  // namespace zarrd::cuda::testing
