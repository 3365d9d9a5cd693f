// The crc32c codec's check on the GPU: the stored chunks of a batch end in the crc32c of the
// bytes before them (a task's src_size excludes those 4 bytes).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/util/status.h"

namespace zarrd::cuda {

// Sets the error of each of the n tasks whose src[0, src_size) does not have the crc32c stored
// after it to kCrc32cMismatch, whatever its decode gave. A block a task.
Status LaunchCrc32cCheck(decode::DecodeTask* tasks, uint32_t n, cudaStream_t stream);

}  // namespace zarrd::cuda
