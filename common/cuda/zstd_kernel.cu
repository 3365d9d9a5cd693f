#include <algorithm>

#include "common/cuda/cuda_status.h"
#include "common/cuda/zstd_kernel.h"
#include "common/decode/zstd_block_entropy.h"
#include "common/decode/zstd_block_execute.h"
#include "common/decode/zstd_block_split.h"
#include "common/decode/zstd_decode.h"

namespace zarrd::cuda {
namespace {

using decode::DecodeError;
using decode::DecodeTask;
using decode::zstd::BlockTables;
using decode::zstd::Lanes;
using decode::zstd::SequenceBatch;
using decode::zstd::SplitBlock;
using decode::zstd::TaskSplit;

constexpr int kPlanThreads = 1024;
constexpr int kSplitThreads = 32;  // few tasks an SM: the split of a task is serial
// The entropy kernel's warps keep BlockTables (about 8.3 KiB) in shared memory: two a block, and
// as many blocks an SM as shared memory holds.
constexpr int kEntropyWarps = 2;
constexpr int kExecuteWarps = 4;
// Frames of more blocks than a task's split holds (zstd_blocks.h) are decoded whole, a warp a
// frame, by these warps.
constexpr int kWholeFrameWarps = 8;

__host__ __device__ constexpr uint64_t Align(uint64_t n, uint64_t to = 256) {
  return (n + to - 1) / to * to;
}

// A block of the batch whose entropy the entropy kernel decodes: task and block index.
struct WorkItem {
  uint32_t task;
  uint32_t block;
};

// The scratch: a header, a TaskSplit a task, the work list, the tasks' blocks, their regions and
// the whole-frame warps' workspaces.
struct Layout {
  uint64_t splits, work, blocks, regions, workspaces, end;
};
__host__ __device__ Layout MakeLayout(uint64_t tasks, uint64_t blocks, uint64_t region_bytes) {
  Layout l;
  l.splits = 256;
  l.work = Align(l.splits + tasks * sizeof(TaskSplit));
  l.blocks = Align(l.work + blocks * sizeof(WorkItem));
  l.regions = Align(l.blocks + blocks * sizeof(SplitBlock));
  l.workspaces = Align(l.regions + region_bytes);
  l.end = l.workspaces + kWholeFrameWarps * sizeof(decode::ZstdWorkspace);
  return l;
}
__host__ __device__ uint64_t TaskRegion(uint64_t dst_size) {
  return Align(decode::zstd::RegionSize(dst_size), 16);
}

struct Header {
  uint32_t work_count;
  uint32_t room;        // the scratch holds the tasks
  uint64_t workspaces;  // the whole-frame warps' ZstdWorkspace
};

// One block of threads: lays out every task's share of the scratch (prefix sums of their block
// capacities and regions) and empties the work list. Tasks get no share (kUnsupported) when the
// scratch is too small for all.
__global__ void __launch_bounds__(kPlanThreads)
    ZstdPlanKernel(const DecodeTask* tasks, int n, uint8_t* scratch, uint64_t bytes) {
  __shared__ uint64_t blocks[kPlanThreads], regions[kPlanThreads];
  __shared__ uint64_t total_blocks, total_regions;
  const int per = (n + kPlanThreads - 1) / kPlanThreads;
  const int first = min(n, static_cast<int>(threadIdx.x) * per), last = min(n, first + per);
  uint64_t b = 0, r = 0;
  for (int t = first; t < last; ++t) {
    b += decode::zstd::SplitCapacity(tasks[t].dst_size);
    r += TaskRegion(tasks[t].dst_size);
  }
  blocks[threadIdx.x] = b;
  regions[threadIdx.x] = r;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint64_t sb = 0, sr = 0;
    for (int i = 0; i < kPlanThreads; ++i) {
      const uint64_t nb = blocks[i], nr = regions[i];
      blocks[i] = sb;
      regions[i] = sr;
      sb += nb;
      sr += nr;
    }
    total_blocks = sb;
    total_regions = sr;
  }
  __syncthreads();
  const Layout l = MakeLayout(n, total_blocks, total_regions);
  const bool room = l.end <= bytes;
  if (threadIdx.x == 0) {
    auto* h = reinterpret_cast<Header*>(scratch);
    h->work_count = 0;
    h->room = room;
    h->workspaces = l.workspaces;
  }
  auto* splits = reinterpret_cast<TaskSplit*>(scratch + l.splits);
  b = blocks[threadIdx.x];
  r = regions[threadIdx.x];
  for (int t = first; t < last; ++t) {
    TaskSplit s;
    if (room) {
      s.blocks = reinterpret_cast<SplitBlock*>(scratch + l.blocks) + b;
      s.capacity = decode::zstd::SplitCapacity(tasks[t].dst_size);
      s.region = scratch + l.regions + r;
      s.region_size = decode::zstd::RegionSize(tasks[t].dst_size);
    } else {
      s.error = DecodeError::kUnsupported;
    }
    splits[t] = s;
    b += s.capacity;
    r += TaskRegion(tasks[t].dst_size);
  }
}

__device__ TaskSplit* Splits(uint8_t* scratch) {
  return reinterpret_cast<TaskSplit*>(scratch + MakeLayout(0, 0, 0).splits);
}
__device__ WorkItem* Work(uint8_t* scratch, int n) {
  return reinterpret_cast<WorkItem*>(scratch + MakeLayout(n, 0, 0).work);
}

// A thread a task: splits it and queues its compressed blocks for the entropy kernel.
__global__ void __launch_bounds__(kSplitThreads)
    ZstdSplitKernel(const DecodeTask* tasks, int n, uint8_t* scratch) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= n) return;
  TaskSplit* split = Splits(scratch) + t;
  TaskSplit s = *split;
  if (s.region == nullptr) return;
  const DecodeTask task = tasks[t];
  decode::zstd::SplitTask(task.src, task.src_size, task.dst_size, &s);
  split->count = s.count;
  split->error = s.error;
  uint32_t compressed = 0;
  for (uint32_t i = 0; i < s.count; ++i) {
    compressed += s.blocks[i].kind == decode::zstd::kCompressedBlock;
  }
  if (compressed == 0) return;
  uint32_t at = atomicAdd(&reinterpret_cast<Header*>(scratch)->work_count, compressed);
  WorkItem* work = Work(scratch, n);
  for (uint32_t i = 0; i < s.count; ++i) {
    if (s.blocks[i].kind == decode::zstd::kCompressedBlock) work[at++] = {uint32_t(t), i};
  }
}

// A warp a compressed block, warps taking blocks in turn from the work list. Registers are held
// to what 24 warps an SM (as many as shared memory allows) leave.
__global__ void __launch_bounds__(32 * kEntropyWarps, 24 / kEntropyWarps)
    ZstdEntropyKernel(const DecodeTask* tasks, int n, uint8_t* scratch, int warps) {
  __shared__ BlockTables tables[kEntropyWarps];
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const Lanes lanes{threadIdx.x % 32, 32};
  const uint32_t count = reinterpret_cast<const Header*>(scratch)->work_count;
  const WorkItem* work = Work(scratch, n);
  TaskSplit* splits = Splits(scratch);
  for (uint32_t w = warp; w < count; w += warps) {
    const WorkItem item = work[w];
    TaskSplit& s = splits[item.task];
    decode::zstd::DecodeBlockEntropy(tasks[item.task].src, s.blocks + item.block, s.region,
                                     tables + threadIdx.x / 32, lanes);
  }
}

// A warp a task: executes its blocks in order.
__global__ void __launch_bounds__(32 * kExecuteWarps)
    ZstdExecuteKernel(DecodeTask* tasks, int n, uint8_t* scratch) {
  __shared__ SequenceBatch batches[kExecuteWarps];
  const int t = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (t >= n) return;  // whole warps leave together
  const Lanes lanes{threadIdx.x % 32, 32};
  const DecodeTask task = tasks[t];
  const TaskSplit s = Splits(scratch)[t];
  uint64_t written = 0;
  const DecodeError e = decode::zstd::ExecuteTask(task.src, s, task.dst, task.dst_size, &written,
                                                  batches + threadIdx.x / 32, lanes);
  if (lanes.Leader()) {
    tasks[t].written = written;
    tasks[t].error = e;
  }
}

// The tasks the split could not hold (kUnsupported: frames of many small blocks), decoded by the
// frame decoder of zstd_decode.h, a warp a task with a workspace in the scratch. There are few or
// none; the others pass by.
__global__ void __launch_bounds__(32 * kWholeFrameWarps)
    ZstdWholeFrameKernel(DecodeTask* tasks, int n, uint8_t* scratch) {
  const auto* h = reinterpret_cast<const Header*>(scratch);
  if (!h->room) return;  // the scratch is too small for the tasks
  const int warp = static_cast<int>(threadIdx.x / 32);
  const Lanes lanes{threadIdx.x % 32, 32};
  auto* ws = reinterpret_cast<decode::ZstdWorkspace*>(scratch + h->workspaces) + warp;
  for (int t = warp; t < n; t += kWholeFrameWarps) {
    if (tasks[t].error != DecodeError::kUnsupported) continue;  // the same for the whole warp
    const DecodeTask task = tasks[t];
    uint64_t written = 0;
    const DecodeError e =
        decode::DecodeZstd(task.src, task.src_size, task.dst, task.dst_size, &written, ws, lanes);
    if (lanes.Leader()) {
      tasks[t].written = written;
      tasks[t].error = e;
    }
    lanes.Sync();
  }
}

int EntropyWarps() {
  int device = 0, sms = 0, per_sm = 0;
  // As much shared memory as the SM holds: it bounds the entropy kernel's warps an SM.
  (void)cudaFuncSetAttribute(ZstdEntropyKernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared);
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ZstdEntropyKernel, 32 * kEntropyWarps,
                                                    0) != cudaSuccess) {
    return 2048;
  }
  return std::max(1, sms * per_sm * kEntropyWarps);
}

}  // namespace

uint64_t ZstdScratchBytes(uint64_t tasks, uint64_t decoded_bytes) {
  const uint64_t blocks = decoded_bytes / 1024 + 16 * tasks;
  const uint64_t regions = decode::zstd::RegionSize(decoded_bytes) + (64 + 16) * tasks;
  return MakeLayout(tasks, blocks, regions).end;
}

Result<ZstdScratch> AllocateZstdScratch(uint64_t bytes) {
  ZstdScratch s;
  ZARRD_RETURN_IF_ERROR(CudaStatus(
      cudaMalloc(&s.data, bytes), "cudaMalloc of " + std::to_string(bytes) + " B of zstd scratch"));
  s.bytes = bytes;
  return s;
}

void FreeZstdScratch(ZstdScratch scratch) { cudaFree(scratch.data); }

Status LaunchZstdDecode(DecodeTask* tasks, int n, ZstdScratch scratch, cudaStream_t stream) {
  if (n <= 0) return OkStatus();
  if (scratch.bytes < 256)
    return Internal("zstd scratch of " + std::to_string(scratch.bytes) + " B");
  const int entropy_blocks = std::max(1, EntropyWarps() / kEntropyWarps);
  ZstdPlanKernel<<<1, kPlanThreads, 0, stream>>>(tasks, n, scratch.data, scratch.bytes);
  ZstdSplitKernel<<<(n + kSplitThreads - 1) / kSplitThreads, kSplitThreads, 0, stream>>>(
      tasks, n, scratch.data);
  ZstdEntropyKernel<<<entropy_blocks, 32 * kEntropyWarps, 0, stream>>>(
      tasks, n, scratch.data, entropy_blocks * kEntropyWarps);
  ZstdExecuteKernel<<<(n + kExecuteWarps - 1) / kExecuteWarps, 32 * kExecuteWarps, 0, stream>>>(
      tasks, n, scratch.data);
  ZstdWholeFrameKernel<<<1, 32 * kWholeFrameWarps, 0, stream>>>(tasks, n, scratch.data);
  return CudaStatus(cudaGetLastError(), "zstd decode kernel launch");
}

}  // namespace zarrd::cuda
