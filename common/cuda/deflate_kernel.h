// Batched inflate on the GPU (common/decode/deflate.h): one thread per gzip or zlib stream, its
// Huffman tables in thread-local memory. Deflate is sequential within a stream, so the batch's
// parallelism is its number of streams.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/util/status.h"

namespace zarrd::cuda {

enum class DeflateWrapper : uint32_t { kGzip, kZlib };

// Decodes d_tasks[0, count) (device memory, device pointers) on `stream`; each task's `error`
// and `written` say how it went.
Status LaunchDeflateDecode(decode::DecodeTask* d_tasks, uint32_t count, DeflateWrapper wrapper,
                           cudaStream_t stream);

}  // namespace zarrd::cuda
