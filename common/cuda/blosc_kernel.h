// Batched decoding of blosc 1 containers on the GPU (common/decode/blosc1.h): one CUDA block per
// container parses its header, then its warps take its blosc blocks in turn, each decoding a
// block's splits with all 32 lanes into scratch and unshuffling it into the output.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/decode/host_device.h"
#include "common/util/status.h"

namespace zarrd::cuda {

// Scratch offsets for `tasks` (host copies of the tasks a launch will decode): each container
// gets dst_size bytes of scratch. Returns the scratch bytes the launch needs.
uint64_t BloscScratchLayout(const std::vector<decode::DecodeTask>& tasks,
                            std::vector<uint64_t>* offsets);

// Decodes d_tasks[0, count) (device memory, device pointers) on `stream`; each task's `error`
// and `written` say how it went. `d_scratch` holds BloscScratchLayout's bytes and
// `d_scratch_offsets` its offsets, both in device memory. zstd splits answer kUnsupported until
// the zstd core is plugged into the seam.
Status LaunchBloscDecode(decode::DecodeTask* d_tasks, uint32_t count, uint8_t* d_scratch,
                         const uint64_t* d_scratch_offsets, cudaStream_t stream);

}  // namespace zarrd::cuda
