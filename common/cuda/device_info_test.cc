#include "common/cuda/device_info.h"

#include <gtest/gtest.h>

#include <regex>

namespace zarrd::cuda {
namespace {

TEST(DeviceInfo, ListsDevicesByUuid) {
  auto devices = ListDevices();
  if (!devices.ok()) GTEST_SKIP() << "needs a GPU: " << devices.status().message();
  ASSERT_FALSE(devices->empty());
  const std::regex uuid("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  for (const auto& d : *devices) {
    EXPECT_TRUE(std::regex_match(d.uuid, uuid)) << d.uuid;
    EXPECT_GT(d.total_memory, uint64_t{1} << 30);
    EXPECT_FALSE(d.name.empty());
    std::cout << "device " << d.ordinal << ": " << d.name << " " << d.uuid << " "
              << (d.total_memory >> 20) << " MiB, sm_" << d.compute_capability_major
              << d.compute_capability_minor << "\n";
    auto by_uuid = FindDevice(d.uuid);
    ASSERT_TRUE(by_uuid.ok());
    EXPECT_EQ(by_uuid->ordinal, d.ordinal);
  }
  EXPECT_EQ(FindDevice("GPU-00000000-0000-0000-0000-000000000000").status().code(),
            StatusCode::kNotFound);
}

TEST(DeviceInfo, NoDeviceIsFailedPrecondition) {
  auto devices = ListDevices();
  if (devices.ok()) GTEST_SKIP() << "a GPU is present: this checks the no-GPU answer";
  EXPECT_EQ(devices.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(devices.status().message().find("no CUDA device"), std::string::npos);
}

}  // namespace
}  // namespace zarrd::cuda
