#include "bench/gpu_limits.h"

#include <cuda_runtime.h>

#include "bench/reference_array.h"
#include "common/cuda/cuda_status.h"

namespace zarrd::bench {

CopyLimits MeasureCopyLimits(const uint8_t* host, uint8_t* dev, uint8_t* dev2, size_t bytes,
                             int repeat) {
  const double h2d = BestSeconds(repeat, [&] {
    return cuda::CudaStatus(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "h2d");
  });
  const double d2d = BestSeconds(repeat + 2, [&] {
    cudaMemcpy(dev2, dev, bytes, cudaMemcpyDeviceToDevice);  // returns before the copy ends
    return cuda::CudaStatus(cudaDeviceSynchronize(), "d2d");
  });
  return {bytes / h2d / 1e9, bytes / d2d / 1e9};
}

}  // namespace zarrd::bench
