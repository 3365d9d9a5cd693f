// CUDA runtime errors as zarrd::Status: out-of-memory is RESOURCE_EXHAUSTED, the rest INTERNAL.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "common/util/status.h"

namespace zarrd::cuda {

// A failed call also leaves its error as the thread's last error, which the next kernel launch's
// check (cudaGetLastError) would report as its own: it is cleared here (sticky errors stay).
inline Status CudaStatus(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return OkStatus();
  (void)cudaGetLastError();
  const std::string message =
      what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation) return ResourceExhausted(message);
  return Internal(message);
}

// Makes `device` current on the calling thread (cheap when it already is).
inline Status UseDevice(int device) {
  return CudaStatus(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
}

}  // namespace zarrd::cuda
