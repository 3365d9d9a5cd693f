// upload_parts: the suite's "full read R2 to GPU" row taken apart, in-process, on the R2 that
// bench/run writes (1 GiB float32 stored raw in 1024 chunk files of 1 MiB).
//
//   upload_parts --dir DIR [--repeat R]
//
// Each part runs on the same thread pool (all cores) over the 1024 chunks, best of R:
//   files -> private buffers      the store's Get into per-thread memory (what DeviceSink reads)
//   files -> pinned buffers       GetExact into per-thread cudaHostAlloc memory
//   private -> pinned copies      memcpy of 1 MiB per chunk, no files
//   uploads alone                 DeviceSink Begin/Commit of each chunk, nothing read or copied
//   transfer mechanisms           each thread its own stream and two pinned buffers, nothing
//                                 read: 1 MiB to scratch + a placing kernel, a 2D copy straight
//                                 into place, 4 or 8 chunks in one transfer + one kernel, and
//                                 1 MiB into a contiguous destination
//   engine host read              Array::Read into pageable memory
//   engine DEVICE read            Array::ReadToSink into a DeviceSink (the server's path)
// beside pinned host-to-device bandwidth measured in the same run.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "bench/bench_util.h"
#include "bench/gpu_limits.h"
#include "bench/reference_array.h"
#include "common/array/array.h"
#include "common/cuda/copy_kernels.h"
#include "common/cuda/device_sink.h"
#include "common/cuda/staging.h"
#include "common/kvstore/store.h"
#include "common/util/thread_pool.h"

namespace zarrd::bench {
namespace {

constexpr int64_t kExtent = 16384, kChunk = 512, kGrid = kExtent / kChunk;
constexpr size_t kTotal = size_t{kExtent} * kExtent * 4, kChunkBytes = kChunk * kChunk * 4;

void MustCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "upload_parts: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double Rate(double seconds) { return kTotal / seconds / 1e9; }

std::string Key(size_t n) {
  return "r2/c/" + std::to_string(n / kGrid) + "/" + std::to_string(n % kGrid);
}

// The placement of chunk n in the full result (as ChunkSelection places it).
Placement Place(size_t n) {
  Placement p;
  p.chunk_strides = {kChunk * 4, 4};
  p.result_strides = {kExtent * 4, 4};
  p.counts = {kChunk, kChunk};
  p.result_offset = ((n / kGrid) * kChunk * kExtent + (n % kGrid) * kChunk) * 4;
  p.covers_chunk = true;
  return p;
}

int Main(int argc, char** argv) {
  std::string dir = "/tmp/zarrd-suite";
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--dir") dir = argv[i + 1];
    if (k == "--repeat") repeat = std::stoi(argv[i + 1]);
  }
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(hw - 1);
  StoreHandle store(Must(OpenLocalStore(dir), "store"));
  auto r2 = Must(Array::Open(store, "r2"), "open r2");
  const size_t n = kGrid * kGrid;

  // Per-thread buffers of each kind, indexed by a thread slot claimed on first use.
  struct PerThread {
    Bytes priv;
    uint8_t* pinned = nullptr;
  };
  std::vector<PerThread> per(hw + 1);
  std::atomic<size_t> claimed{0};
  auto mine = [&]() -> PerThread& {
    thread_local size_t slot = claimed.fetch_add(1);
    return per.at(slot);
  };
  for (auto& t : per) {
    t.priv.resize(kChunkBytes);
    MustCuda(cudaHostAlloc(reinterpret_cast<void**>(&t.pinned), kChunkBytes, 0), "pinned");
    std::memset(t.pinned, 0, kChunkBytes);
  }
  auto files_into = [&](int which) {
    return BestSeconds(repeat, [&] {
      return pool.ParallelFor(n, [&](size_t i) -> Status {
        PerThread& t = mine();
        if (which == 0) {
          ZARRD_ASSIGN_OR_RETURN(bool found, store->Get(Key(i), &t.priv));
          return found ? OkStatus() : NotFound(Key(i));
        }
        ZARRD_ASSIGN_OR_RETURN(auto size,
                               store->GetExact(Key(i), MutableByteView(t.pinned, kChunkBytes)));
        return size && *size == kChunkBytes ? OkStatus() : NotFound(Key(i));
      });
    });
  };
  const double files_private = Rate(files_into(0));
  const double files_pinned = Rate(files_into(1));
  const double copies = Rate(BestSeconds(repeat, [&] {
    return pool.ParallelFor(n, [&](size_t) -> Status {
      PerThread& t = mine();
      std::memcpy(t.pinned, t.priv.data(), kChunkBytes);
      return OkStatus();
    });
  }));

  uint8_t* host = nullptr;
  MustCuda(cudaHostAlloc(reinterpret_cast<void**>(&host), kTotal, 0), "pinned result");
  std::vector<uint8_t> pageable(kTotal);
  std::memset(pageable.data(), 0, kTotal);
  const double engine_host = Rate(
      BestSeconds(repeat, [&] { return r2->Read({}, pageable.data(), kTotal, {.pool = &pool}); }));
  std::memcpy(host, pageable.data(), kTotal);
  uint8_t *dev = nullptr, *dev2 = nullptr;
  MustCuda(cudaMalloc(&dev, kTotal), "cudaMalloc");
  MustCuda(cudaMalloc(&dev2, kTotal), "cudaMalloc");
  const auto limits = MeasureCopyLimits(host, dev, dev2, kTotal, repeat);

  cuda::StagingPool staging(0, 2 * hw + 2);
  const double uploads = Rate(BestSeconds(repeat, [&] {
    cuda::DeviceSink sink(staging, dev, 4);
    sink.Start(n);
    Status s = pool.ParallelFor(n, [&](size_t i) -> Status {
      const Placement p = Place(i);
      ZARRD_ASSIGN_OR_RETURN(auto buffer, sink.Begin(p, kChunkBytes));
      return sink.Commit(p, buffer);
    });
    Status f = sink.Finish();
    return s.ok() ? f : s;
  }));
  // Transfer mechanisms, each thread with its own stream and double-buffered pinned memory.
  struct Lane {
    cudaStream_t stream = nullptr;
    uint8_t* pinned[2] = {};
    uint8_t* scratch[2] = {};
    uint8_t* desc_pinned[2] = {};
    uint8_t* desc_scratch[2] = {};
    cudaEvent_t done[2] = {};
    int next = 0;
  };
  constexpr size_t kGroup = 8;
  std::vector<Lane> lanes(hw + 1);
  for (auto& l : lanes) {
    MustCuda(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking), "stream");
    for (int b = 0; b < 2; ++b) {
      MustCuda(cudaHostAlloc(reinterpret_cast<void**>(&l.pinned[b]), kGroup * kChunkBytes, 0), "p");
      MustCuda(cudaMalloc(&l.scratch[b], kGroup * kChunkBytes), "scratch");
      MustCuda(cudaHostAlloc(reinterpret_cast<void**>(&l.desc_pinned[b]),
                             kGroup * sizeof(cuda::StridedCopyDesc), 0),
               "p");
      MustCuda(cudaMalloc(&l.desc_scratch[b], kGroup * sizeof(cuda::StridedCopyDesc)), "s");
      MustCuda(cudaEventCreateWithFlags(&l.done[b], cudaEventDisableTiming), "event");
      MustCuda(cudaEventRecord(l.done[b], l.stream), "event");
    }
  }
  std::atomic<size_t> lane_claimed{0};
  auto lane = [&]() -> Lane& {
    thread_local size_t slot = lane_claimed.fetch_add(1);
    return lanes.at(slot);
  };
  auto desc_of = [&](size_t i, const uint8_t* src) {
    const Placement p = Place(i);
    return *cuda::MakeCopyDesc(src, p.chunk_strides.data(), dev + p.result_offset,
                               p.result_strides.data(), p.counts.data(), 2, 4);
  };
  // K chunks per transfer (K = 1: DeviceSink's way); `mode` 0 scratch + kernel, 1 2D copy,
  // 2 contiguous.
  auto mechanism = [&](size_t group, int mode) {
    return Rate(BestSeconds(repeat, [&] {
      Status s = pool.ParallelFor(n / group, [&](size_t g) -> Status {
        Lane& l = lane();
        const int b = l.next;
        l.next ^= 1;
        MustCuda(cudaEventSynchronize(l.done[b]), "previous transfer");
        if (mode == 1) {
          const Placement p = Place(g);
          MustCuda(cudaMemcpy2DAsync(dev + p.result_offset, kExtent * 4, l.pinned[b], kChunk * 4,
                                     kChunk * 4, kChunk, cudaMemcpyHostToDevice, l.stream),
                   "2d");
        } else if (mode == 2) {
          MustCuda(cudaMemcpyAsync(dev + g * kChunkBytes, l.pinned[b], kChunkBytes,
                                   cudaMemcpyHostToDevice, l.stream),
                   "contiguous");
        } else {
          MustCuda(cudaMemcpyAsync(l.scratch[b], l.pinned[b], group * kChunkBytes,
                                   cudaMemcpyHostToDevice, l.stream),
                   "to scratch");
          cuda::StridedCopyDesc descs[kGroup];
          for (size_t k = 0; k < group; ++k) {
            descs[k] = desc_of(g * group + k, l.scratch[b] + k * kChunkBytes);
          }
          if (group == 1) {
            ZARRD_RETURN_IF_ERROR(cuda::LaunchStridedCopy(descs[0], l.stream));
          } else {
            ZARRD_RETURN_IF_ERROR(cuda::LaunchStridedCopies(descs, group, l.desc_pinned[b],
                                                            l.desc_scratch[b], l.stream));
          }
        }
        MustCuda(cudaEventRecord(l.done[b], l.stream), "event");
        return OkStatus();
      });
      MustCuda(cudaDeviceSynchronize(), "sync");
      return s;
    }));
  };
  const double by_kernel = mechanism(1, 0);
  const double by_2d = mechanism(1, 1);
  const double by_group4 = mechanism(4, 0);
  const double by_group8 = mechanism(8, 0);
  const double contiguous = mechanism(1, 2);

  auto resolved = Must(ResolveSelection({}, {kExtent, kExtent}), "selection");
  const double engine_device = Rate(BestSeconds(repeat, [&] {
    cuda::DeviceSink sink(staging, dev, 4);
    return r2->ReadToSink(resolved, sink, {.pool = &pool});
  }));
  std::vector<uint8_t> back(kTotal);
  MustCuda(cudaMemcpy(back.data(), dev, kTotal, cudaMemcpyDeviceToHost), "d2h");
  const bool equal = std::memcmp(back.data(), host, kTotal) == 0;

  std::printf("upload_parts: R2 in %s, %zu threads, best of %d\n", dir.c_str(), hw, repeat);
  auto row = [&](const char* what, double gbs) {
    std::printf("  %-34s %7.2f GB/s  %.2f of H2D\n", what, gbs, gbs / limits.h2d_gbps);
  };
  row("pinned host-to-device copy", limits.h2d_gbps);
  row("files -> private buffers", files_private);
  row("files -> pinned buffers", files_pinned);
  row("private -> pinned copies", copies);
  row("uploads alone (DeviceSink)", uploads);
  row("1 MiB to scratch + kernel, a lane", by_kernel);
  row("1 MiB 2D copy into place, a lane", by_2d);
  row("4 MiB to scratch + kernel, a lane", by_group4);
  row("8 MiB to scratch + kernel, a lane", by_group8);
  row("1 MiB contiguous, a lane", contiguous);
  row("engine host read (pageable)", engine_host);
  row("engine DEVICE read (DeviceSink)", engine_device);
  std::printf("  values: %s\n", equal ? "the DEVICE read equals the host read" : "DIFFER");
  return equal ? 0 : 1;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
