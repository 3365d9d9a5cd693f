#include "common/cuda/ipc.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>

#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {
namespace {

std::atomic<uint64_t> open_count{0};

using GetAddressRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);

// cuMemGetAddressRange from the driver, through the runtime (cudart is linked statically).
Result<GetAddressRange> AddressRangeFunction() {
  static GetAddressRange fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      f = nullptr;
    }
    return reinterpret_cast<GetAddressRange>(f);
  }();
  if (!fn) return Internal("the CUDA driver has no cuMemGetAddressRange");
  return fn;
}

}  // namespace

Result<std::shared_ptr<IpcMapping>> IpcMapping::Open(int device, const IpcHandleBytes& bytes) {
  ZARRD_RETURN_IF_ERROR(UseDevice(device));
  cudaIpcMemHandle_t handle;
  std::copy(bytes.begin(), bytes.end(), handle.reserved);
  void* base = nullptr;
  ZARRD_RETURN_IF_ERROR(CudaStatus(
      cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle"));
  ++open_count;
  return std::shared_ptr<IpcMapping>(new IpcMapping(device, static_cast<uint8_t*>(base)));
}

IpcMapping::~IpcMapping() {
  cudaSetDevice(device_);
  cudaIpcCloseMemHandle(base_);
}

Result<std::pair<IpcHandleBytes, uint64_t>> ExportIpc(const void* ptr) {
  ZARRD_ASSIGN_OR_RETURN(GetAddressRange range, AddressRangeFunction());
  CUdeviceptr base = 0;
  size_t size = 0;
  if (range(&base, &size, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) {
    return InvalidArgument("the pointer is not device memory of this process");
  }
  cudaIpcMemHandle_t handle;
  ZARRD_RETURN_IF_ERROR(CudaStatus(cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(base)),
                                   "cudaIpcGetMemHandle"));
  IpcHandleBytes bytes;
  std::copy(handle.reserved, handle.reserved + 64, bytes.begin());
  return std::make_pair(bytes, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ptr) - base));
}

uint64_t IpcOpenCount() { return open_count; }

}  // namespace zarrd::cuda
