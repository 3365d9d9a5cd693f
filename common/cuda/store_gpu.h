// The GPU memory store: values live in device memory of the server, except those the caller
// keeps on the host (metadata documents: GpuStoreOptions::on_host). Arrays stored raw (the bytes
// codec alone, little-endian) are read to the GPU by a device-to-device copy, never touching the
// disk or the CPU decoder; encoded chunks that the GPU decodes are decoded where they are (a
// DeviceValue carries a host copy of its first bytes, to choose the kernel); other arrays still
// work, through the host. Capacity is capped: a write that does not fit is RESOURCE_EXHAUSTED.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/cuda/device_pool.h"
#include "common/kvstore/store.h"

namespace zarrd::cuda {

struct GpuStoreOptions {
  std::string name;  // for messages
  int device = 0;
  uint64_t capacity_bytes = uint64_t{1} << 30;
  // The keys whose values stay in host memory; unset: none.
  std::function<bool(std::string_view key)> on_host;
};

// A Store that is a DeviceResidentStore (common/kvstore/device_resident_store.h).
Result<std::shared_ptr<Store>> MakeGpuStore(const GpuStoreOptions& options);

}  // namespace zarrd::cuda
