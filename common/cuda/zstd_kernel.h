// Batched zstd decoding on the GPU with the block-parallel core of common/decode/zstd_blocks.h,
// five kernels a launch on one stream:
//   plan     one block: each task's share of the scratch (prefix sums over the tasks);
//   split    a thread a task: frame, block and section headers (zstd_block_split.h), the
//            task's compressed blocks queued on a work list;
//   entropy  a warp a compressed block, warps taking blocks from the work list in turn: tables,
//            literals and raw sequences (zstd_block_entropy.h), BlockTables in shared memory;
//   execute  a warp a task: its blocks in order (zstd_block_execute.h), a SequenceBatch in
//            shared memory;
//   whole    the tasks whose frames have more blocks than their split holds (kUnsupported
//            there), a warp a task decoding them frame by frame (zstd_decode.h).
// So the blocks of all frames are entropy-decoded at once, and a frame's serial part is its
// execution, 32 sequences at a time.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/decode/host_device.h"
#include "common/util/status.h"

namespace zarrd::cuda {

// Device memory for the kernels' split, literals and sequences.
struct ZstdScratch {
  uint8_t* data = nullptr;
  uint64_t bytes = 0;
};

// The scratch that `tasks` tasks decoding to `decoded_bytes` bytes in all need: about 4.1 bytes
// a decoded byte (a task's literals and sequences take at most 4 bytes an output byte), a few
// KiB a task, and 1.4 MiB of workspaces for frames decoded whole.
uint64_t ZstdScratchBytes(uint64_t tasks, uint64_t decoded_bytes);
Result<ZstdScratch> AllocateZstdScratch(uint64_t bytes);
void FreeZstdScratch(ZstdScratch scratch);

// Decodes tasks[0..n) (device memory; src and dst device pointers) on `stream`, writing each
// task's `error` and `written`; `scratch` must hold ZstdScratchBytes of the tasks (else every
// task gives kUnsupported) and is not used by another stream meanwhile. Asynchronous: the tasks,
// buffers and scratch must live until the stream has run it. Errors are per task; the Status
// reports only a failed launch.
Status LaunchZstdDecode(decode::DecodeTask* tasks, int n, ZstdScratch scratch, cudaStream_t stream);

}  // namespace zarrd::cuda
