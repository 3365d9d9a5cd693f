// Batched decoding of blosc 1 containers on the GPU (common/decode/blosc1.h): one CUDA block per
// container parses its header, then its warps take its blosc blocks in turn, each decoding a
// block's splits with all 32 lanes into scratch and unshuffling it into the output. zstd splits
// are decoded by the warp with zstd_decode.h's frame decoder, in a workspace of its own.
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

// Device memory for the zstd splits of blosc containers (zstd_decode.h's workspaces, one a warp
// of a launch that has them; a launch with them runs a fixed number of warps).
uint64_t BloscZstdWorkspaceBytes();

// Decodes d_tasks[0, count) (device memory, device pointers) on `stream`; each task's `error`
// and `written` say how it went. `d_scratch` holds BloscScratchLayout's bytes and
// `d_scratch_offsets` its offsets, both in device memory. `d_zstd_workspaces` holds
// BloscZstdWorkspaceBytes for containers of zstd splits; without it (nullptr) they give
// kUnsupported.
Status LaunchBloscDecode(decode::DecodeTask* d_tasks, uint32_t count, uint8_t* d_scratch,
                         const uint64_t* d_scratch_offsets, void* d_zstd_workspaces,
                         cudaStream_t stream);

}  // namespace zarrd::cuda
