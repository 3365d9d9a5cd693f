// Batched inflate on the GPU (common/decode/deflate.h): one warp per gzip or zlib stream, its
// Huffman tables in shared memory. Deflate's parse is sequential within a stream (lane 0), so the
// batch's parallelism is its number of streams; the lanes share each stream's copies and checksum.
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
