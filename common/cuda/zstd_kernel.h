// Batched zstd decoding on the GPU with the core of common/decode/zstd_decode.h: each warp
// decodes one task (a chunk's frames) at a time, its 32 lanes sharing the copies, and takes
// tasks in turn (warp w decodes tasks w, w + slots, ...). Each warp owns one workspace slot.
#pragma once

#include <cuda_runtime.h>

#include "common/decode/host_device.h"
#include "common/decode/zstd_workspace.h"
#include "common/util/status.h"

namespace zarrd::cuda {

// Device memory for `slots` decoding warps (kZstdWorkspaceSize bytes each); about 170 KiB a
// slot, so a few thousand slots (enough to fill an H200) take a few hundred MiB. The tables
// each warp reads most live in shared memory, not in its slot.
Result<decode::ZstdWorkspace*> AllocateZstdWorkspaces(int slots);
void FreeZstdWorkspaces(decode::ZstdWorkspace* workspaces);

// A slot count that keeps every SM of the current device busy.
int DefaultZstdSlots();

// Decodes tasks[0..n) (device memory; src and dst device pointers) on `stream`, writing each
// task's `error` and `written`. Asynchronous: the tasks and buffers must live until the stream
// has run it. Errors are per task; the Status reports only a failed launch.
Status LaunchZstdDecode(decode::DecodeTask* tasks, int n, decode::ZstdWorkspace* workspaces,
                        int slots, cudaStream_t stream);

}  // namespace zarrd::cuda
