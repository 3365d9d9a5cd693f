#include <algorithm>
#include <cuda/atomic>

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
constexpr int kOrderThreads = 1024;
constexpr int kExecuteWarps = 4;
constexpr int kFinishWarps = 4;
// Frames of more blocks than a task's split holds (zstd_blocks.h) are decoded whole, a warp a
// frame, by these warps.
constexpr int kWholeFrameWarps = 8;

__host__ __device__ constexpr uint64_t Align(uint64_t n, uint64_t to = 256) {
  return (n + to - 1) / to * to;
}

// A block of the batch: for the entropy kernel, one to entropy-decode; for the execute kernel,
// one to execute (in the order of the tasks and of their blocks).
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
  uint32_t room;           // the scratch holds the tasks
  uint32_t execute_count;  // blocks to execute (the order kernel's work list)
  uint32_t execute_next;   // the next of them a warp takes
  uint64_t workspaces;     // the whole-frame warps' ZstdWorkspace
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

// One block of threads, after the entropy kernel: plans each task's execution (PlanExecution) and
// lists the blocks to execute in the order of the tasks and of their blocks, so that a warp that
// takes a block from the list finds every earlier block of its task taken by a running warp.
__global__ void __launch_bounds__(kOrderThreads)
    ZstdOrderKernel(const DecodeTask* tasks, int n, uint8_t* scratch) {
  __shared__ uint32_t firsts[kOrderThreads];
  const int per = (n + kOrderThreads - 1) / kOrderThreads;
  const int first = min(n, static_cast<int>(threadIdx.x) * per), last = min(n, first + per);
  TaskSplit* splits = Splits(scratch);
  uint32_t count = 0;
  for (int t = first; t < last; ++t) {
    TaskSplit& s = splits[t];
    s.runnable = decode::zstd::PlanExecution(s, tasks[t].dst_size);
    count += s.runnable;
  }
  firsts[threadIdx.x] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t sum = 0;
    for (int i = 0; i < kOrderThreads; ++i) {
      const uint32_t c = firsts[i];
      firsts[i] = sum;
      sum += c;
    }
    auto* h = reinterpret_cast<Header*>(scratch);
    h->execute_count = sum;
    h->execute_next = 0;
  }
  __syncthreads();
  WorkItem* work = Work(scratch, n);
  uint32_t at = firsts[threadIdx.x];
  for (int t = first; t < last; ++t) {
    for (uint32_t b = 0; b < splits[t].runnable; ++b) work[at++] = {uint32_t(t), b};
  }
}

// The blocks' progress words in GPU memory, read and written at device scope.
struct DeviceAtomics {
  __device__ uint32_t Load(uint32_t* word) const {
    return ::cuda::atomic_ref<uint32_t, ::cuda::thread_scope_device>(*word).load(
        ::cuda::memory_order_acquire);
  }
  __device__ void Store(uint32_t* word, uint32_t value, const Lanes& lanes) const {
    __threadfence();  // each lane's writes before the word
    lanes.Sync();
    if (lanes.Leader()) {
      ::cuda::atomic_ref<uint32_t, ::cuda::thread_scope_device>(*word).store(
          value, ::cuda::memory_order_release);
    }
  }
  __device__ void Fence() const { __threadfence(); }
  __device__ void Pause() const { __nanosleep(200); }
};

// Warps take blocks from the order kernel's list in turn and execute them at once; a batch whose
// matches reach into an earlier block of its task waits for those bytes (BlockProgress). Every
// block a warp waits for was taken earlier by a warp that runs, so the waits end.
__global__ void __launch_bounds__(32 * kExecuteWarps)
    ZstdExecuteKernel(const DecodeTask* tasks, int n, uint8_t* scratch) {
  __shared__ SequenceBatch batches[kExecuteWarps];
  const Lanes lanes{threadIdx.x % 32, 32};
  auto* h = reinterpret_cast<Header*>(scratch);
  const uint32_t count = h->execute_count;
  const WorkItem* work = Work(scratch, n);
  TaskSplit* splits = Splits(scratch);
  for (;;) {
    uint32_t w = 0;
    if (lanes.Leader()) w = atomicAdd(&h->execute_next, 1u);
    w = uint32_t(lanes.Broadcast(uint64_t(w)));
    if (w >= count) return;  // whole warps leave together
    const WorkItem item = work[w];
    const TaskSplit& s = splits[item.task];
    const DecodeTask task = tasks[item.task];
    const decode::zstd::BlockProgress<DeviceAtomics> progress{s.blocks, item.block, {}};
    const DecodeError e =
        decode::zstd::ExecuteBlock(task.src, s, item.block, task.dst, task.dst_size,
                                   batches + threadIdx.x / 32, lanes, progress);
    SplitBlock& b = s.blocks[item.block];
    if (e != DecodeError::kOk && lanes.Leader()) b.error = e;
    progress.Publish(e == DecodeError::kOk ? uint32_t(b.out_size) : decode::zstd::kBlockFailed,
                     lanes);
  }
}

// A warp a task, after its blocks executed: its frames' checks, error and bytes written.
__global__ void __launch_bounds__(32 * kFinishWarps)
    ZstdFinishKernel(DecodeTask* tasks, int n, uint8_t* scratch) {
  const int t = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (t >= n) return;  // whole warps leave together
  const Lanes lanes{threadIdx.x % 32, 32};
  const DecodeTask task = tasks[t];
  uint64_t written = 0;
  const DecodeError e =
      decode::zstd::FinishTask(Splits(scratch)[t], task.dst, task.dst_size, &written, lanes);
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

// Warps of the execute kernel that run at once: each takes blocks until none are left.
int ExecuteBlocks() {
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ZstdExecuteKernel, 32 * kExecuteWarps,
                                                    0) != cudaSuccess) {
    return 1024;
  }
  return std::max(1, sms * per_sm);
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
  ZstdOrderKernel<<<1, kOrderThreads, 0, stream>>>(tasks, n, scratch.data);
  ZstdExecuteKernel<<<ExecuteBlocks(), 32 * kExecuteWarps, 0, stream>>>(tasks, n, scratch.data);
  ZstdFinishKernel<<<(n + kFinishWarps - 1) / kFinishWarps, 32 * kFinishWarps, 0, stream>>>(
      tasks, n, scratch.data);
  ZstdWholeFrameKernel<<<1, 32 * kWholeFrameWarps, 0, stream>>>(tasks, n, scratch.data);
  return CudaStatus(cudaGetLastError(), "zstd decode kernel launch");
}

}  // namespace zarrd::cuda
