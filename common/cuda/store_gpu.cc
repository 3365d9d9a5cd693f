#include "common/cuda/store_gpu.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "common/cuda/cuda_status.h"
#include "common/kvstore/device_resident_store.h"

namespace zarrd::cuda {

namespace {

struct Value {
  std::shared_ptr<const Bytes> host;
  std::shared_ptr<DeviceAllocation> device;
  std::array<uint8_t, DeviceValue::kHeadBytes> head{};  // of device values
  uint64_t size() const { return host ? host->size() : device->size(); }
};

class GpuStore final : public Store, public DeviceResidentStore {
 public:
  GpuStore(GpuStoreOptions options, std::shared_ptr<DevicePool> pool)
      : options_(std::move(options)), pool_(std::move(pool)) {}

  Result<bool> Get(const std::string& key, Bytes* out) override {
    return GetRange(key, ByteRange::Suffix(UINT64_MAX), out);
  }

  Result<bool> GetRange(const std::string& key, ByteRange range, Bytes* out) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    auto value = values_.Find(key);
    if (!value) return false;
    if (range.suffix) range.length = std::min(range.length, value->size());
    ZARRD_ASSIGN_OR_RETURN(uint64_t offset, RangeOffset(range, value->size(), Where(key)));
    if (value->host) {
      out->assign(value->host->begin() + offset, value->host->begin() + offset + range.length);
      return true;
    }
    out->resize(range.length);
    ZARRD_RETURN_IF_ERROR(UseDevice(options_.device));
    ZARRD_RETURN_IF_ERROR(CudaStatus(cudaMemcpy(out->data(), value->device->data() + offset,
                                                range.length, cudaMemcpyDeviceToHost),
                                     Where(key) + ": copy to the host"));
    return true;
  }

  int device() const override { return options_.device; }

  Result<std::optional<DeviceValue>> GetDevice(const std::string& key) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    auto value = values_.Find(key);
    if (!value) return std::optional<DeviceValue>();
    if (!value->device) return FailedPrecondition(Where(key) + " is held on the host");
    return std::optional<DeviceValue>(DeviceValue{.data = value->device->data(),
                                                  .size = value->device->size(),
                                                  .keepalive = value->device,
                                                  .head_bytes = value->head});
  }

  Status Set(const std::string& key, ByteView bytes) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    auto value = std::make_shared<Value>();
    if (options_.on_host && options_.on_host(key)) {
      value->host = std::make_shared<const Bytes>(bytes.begin(), bytes.end());
    } else {
      auto allocation = pool_->Allocate(bytes.size());
      if (!allocation.ok()) {
        return ResourceExhausted(Where(key) +
                                 ": the GPU store is full: " + allocation.status().message());
      }
      ZARRD_RETURN_IF_ERROR(UseDevice(options_.device));
      ZARRD_RETURN_IF_ERROR(CudaStatus(
          cudaMemcpy((*allocation)->data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
          Where(key) + ": copy to the GPU"));
      value->device = std::move(*allocation);
      std::copy_n(bytes.data(), std::min(bytes.size(), value->head.size()), value->head.begin());
    }
    values_.Put(key, std::move(value));
    return OkStatus();
  }

  Status Delete(const std::string& key) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    values_.Erase(key);
    return OkStatus();
  }

  Result<std::vector<std::string>> List(const std::string& prefix) override {
    return values_.Keys(prefix);
  }

  std::string Describe() const override {
    const PoolStats s = pool_->stats();
    return "GPU memory store \"" + options_.name + "\" on device " +
           std::to_string(options_.device) + " (" + std::to_string(s.in_use_bytes) + " of " +
           std::to_string(s.capacity_bytes) + " bytes used)";
  }

 private:
  std::string Where(const std::string& key) const {
    return "GPU store \"" + options_.name + "\" key \"" + key + "\"";
  }
  GpuStoreOptions options_;
  std::shared_ptr<DevicePool> pool_;
  ::zarrd::internal::KeyedValues<Value> values_;
};

}  // namespace

Result<std::shared_ptr<Store>> MakeGpuStore(const GpuStoreOptions& options) {
  ZARRD_ASSIGN_OR_RETURN(
      auto pool, DevicePool::Create(
                     {.device = options.device,
                      .name = "of GPU store \"" + options.name + "\"",
                      .capacity_bytes = options.capacity_bytes,
                      .slab_bytes = std::min<uint64_t>(options.capacity_bytes, uint64_t{1} << 30),
                      .export_ipc = false}));
  return std::shared_ptr<Store>(std::make_shared<GpuStore>(options, std::move(pool)));
}

}  // namespace zarrd::cuda
