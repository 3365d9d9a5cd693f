#include "server/device_backend.h"

namespace zarrd::server {
namespace {

class NoDeviceBackend final : public DeviceBackend {
 public:
  explicit NoDeviceBackend(std::string why) : why_(std::move(why)) {}
  DeviceInventory Describe() const override { return {}; }
  Result<std::shared_ptr<Store>> MakeGpuStore(const StoreConfig& config) override {
    return Refuse("store \"" + config.name + "\" of kind gpu");
  }
  Result<DeviceResult> Read(const Array&, const ResolvedSelection&, uint64_t,
                            const DeviceReadTarget&, const IoOptions&) override {
    return Refuse("DEVICE results");
  }
  Result<DeviceResult> Upload(uint64_t, const DeviceReadTarget&, const HostGather&) override {
    return Refuse("DEVICE results");
  }
  Result<bool> ReadToHost(const Array&, const ResolvedSelection&, MutableByteView,
                          std::optional<GpuDecodeMode>, const IoOptions&) override {
    return false;
  }
  Result<uint64_t> Write(Array&, const ResolvedSelection&, const DeviceWriteSource&,
                         const IoOptions&) override {
    return Refuse("input in GPU memory");
  }
  Result<std::string> RegisterRegion(const DeviceRegionRegistration&) override {
    return Refuse("device regions");
  }
  Status UnregisterRegion(const std::string& id) override { return Refuse("device regions"); }
  Status ReleaseLease(uint64_t id) override { return Refuse("leases"); }
  void Reap() override {}

 private:
  Status Refuse(const std::string& what) const {
    return FailedPrecondition(what + ": no CUDA device (" + why_ + ")");
  }
  std::string why_;
};

}  // namespace

std::unique_ptr<DeviceBackend> MakeNoDeviceBackend(std::string why) {
  return std::make_unique<NoDeviceBackend>(std::move(why));
}

#ifndef ZARRD_HAVE_CUDA
Result<std::unique_ptr<DeviceBackend>> MakeDeviceBackend(const ServerConfig& config) {
  const std::string why = "this build of zarrd has no CUDA support";
  if (config.devices && !config.devices->empty()) return FailedPrecondition("devices: " + why);
  for (const auto& s : config.stores) {
    if (s.kind == "gpu") return FailedPrecondition("store \"" + s.name + "\": " + why);
  }
  return MakeNoDeviceBackend(why);
}
#endif

}  // namespace zarrd::server
