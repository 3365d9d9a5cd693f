// gpu_decode_read: the engine's DEVICE read with its chunks decoded on the CPUs against on the
// GPU (DeviceSink with gpu_decode never / always), in-process, for R1 (zstd 3) and R4 (v2 blosc
// lz4 5 + shuffle): whole-array rates with the process's CPU seconds per GiB, the same to a HOST
// buffer (the engine's CPU read against a GPU decode copied back), then reads of 1 to 1024
// chunks, which place auto's crossover.
//
//   gpu_decode_read [--dir DIR] [--repeat R] [--array r1|r4]
//
// Rates are array bytes over the best of R runs; a sweep's times are the median of R + 2 runs.
#include <cuda_runtime.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/reference_array.h"
#include "common/array/engine_stats.h"
#include "common/cuda/device_sink.h"
#include "common/cuda/host_copy.h"

namespace zarrd::bench {
namespace {

constexpr int64_t kExtent = 16384, kChunk = 512;
constexpr size_t kTotal = size_t{kExtent} * kExtent * 4;

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "gpu_decode_read: %s\n", s.ToString().c_str());
    std::exit(1);
  }
}

void CheckCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_decode_read: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

// The first `n` chunks in row-major order (n a power of two), as a selection.
ResolvedSelection FirstChunks(size_t n) {
  const int64_t per_row = kExtent / kChunk;
  const int64_t cols = std::min<int64_t>(n, per_row), rows = (n + per_row - 1) / per_row;
  std::string text = "0:" + std::to_string(rows * kChunk) + ", 0:" + std::to_string(cols * kChunk);
  return *ResolveSelection(*ParseSelection(text), {kExtent, kExtent});
}

int Main(int argc, char** argv) {
  std::string dir = "zarrd-bench-data", only;
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--dir") dir = argv[i + 1];
    if (k == "--repeat") repeat = std::stoi(argv[i + 1]);
    if (k == "--array") only = argv[i + 1];
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(hw - 1);
  StoreHandle store(*OpenLocalStore(dir));
  cudaDeviceProp prop;
  CheckCuda(cudaGetDeviceProperties(&prop, 0), "device");
  std::printf("gpu_decode_read: %s, %zu cores; best of %d (sweep: median of %d)\n", prop.name, hw,
              repeat, repeat + 2);
  uint8_t* dev = nullptr;
  CheckCuda(cudaMalloc(&dev, kTotal), "cudaMalloc");
  std::vector<uint8_t> host(kTotal), back(kTotal);
  cuda::StagingPool staging(0, 2 * hw + 2);
  for (const char* name : {"r1", "r4"}) {
    if (!only.empty() && only != name) continue;
    const bool blosc = std::string(name) == "r4";
    auto array = OpenOrWriteReference(store, name, {.blosc = blosc}, pool);
    Check(array.status());
    const auto all = *ResolveSelection({}, {kExtent, kExtent});
    Check((*array)->Read({}, host.data(), kTotal, {.pool = &pool}));
    auto read = [&](GpuDecodeMode mode, const ResolvedSelection& sel) {
      cuda::DeviceSink sink(staging, dev, 4, nullptr, {.mode = mode});
      return (*array)->ReadToSink(sel, sink, {.pool = &pool});
    };
    std::printf("%s (%s)\n", name, blosc ? "v2 blosc lz4 5 + shuffle" : "zstd 3");
    // auto: the GPU, and the CPUs for the chunks that come while every batch slot is decoding.
    for (GpuDecodeMode mode :
         {GpuDecodeMode::kNever, GpuDecodeMode::kAlways, GpuDecodeMode::kAuto}) {
      Check(read(mode, all));  // warm-up: staging slots and page cache
      const double cpu0 = CpuSeconds();
      double best = 1e9;
      for (int r = 0; r < repeat; ++r) {
        CheckCuda(cudaMemset(dev, 0, kTotal), "memset");
        const double t0 = NowSeconds();
        Check(read(mode, all));
        best = std::min(best, NowSeconds() - t0);
      }
      const double cpu_per_gib = (CpuSeconds() - cpu0) / repeat / (kTotal / double(1 << 30));
      CheckCuda(cudaMemcpy(back.data(), dev, kTotal, cudaMemcpyDeviceToHost), "d2h");
      const bool equal = std::memcmp(back.data(), host.data(), kTotal) == 0;
      const uint64_t gpu_chunks0 = GlobalEngineStats().chunks_gpu_decoded.load();
      Check(read(mode, all));
      const uint64_t gpu_chunks = GlobalEngineStats().chunks_gpu_decoded.load() - gpu_chunks0;
      std::printf(
          "  whole array, %-6s decode: %7.2f GB/s, %.3f CPU s/GiB, %llu chunks on the GPU%s\n",
          mode == GpuDecodeMode::kNever    ? "CPU"
          : mode == GpuDecodeMode::kAlways ? "GPU"
                                           : "auto",
          kTotal / best / 1e9, cpu_per_gib, static_cast<unsigned long long>(gpu_chunks),
          equal ? "" : "  VALUES DIFFER");
    }
    // HOST results: the engine's read into host memory against a GPU decode copied back into
    // pageable memory (a protobuf result) and into pinned memory.
    auto best_of = [&](auto&& run) {
      run();
      double best = 1e9;
      for (int r = 0; r < repeat; ++r) {
        const double t0 = NowSeconds();
        run();
        best = std::min(best, NowSeconds() - t0);
      }
      return best;
    };
    uint8_t* pinned = nullptr;
    CheckCuda(cudaMallocHost(&pinned, kTotal), "cudaMallocHost");
    const double host_cpu =
        best_of([&] { Check((*array)->Read({}, back.data(), kTotal, {.pool = &pool})); });
    std::printf("  whole array to HOST, CPU decode: %7.2f GB/s\n", kTotal / host_cpu / 1e9);
    // zarrd's copy back (CopyToHost: parts through pinned staging, a thread of the pool each)
    // beside one cudaMemcpy into pageable and into pinned memory.
    for (std::string_view how : {"pageable", "pinned", "zarrd"}) {
      uint8_t* to = how == "pinned" ? pinned : back.data();
      std::memset(to, 0, kTotal);
      const double t = best_of([&] {
        Check(read(GpuDecodeMode::kAlways, all));
        if (how == "zarrd") {
          Check(cuda::CopyToHost(staging, dev, {to, kTotal}, pool));
        } else {
          CheckCuda(cudaMemcpy(to, dev, kTotal, cudaMemcpyDeviceToHost), "d2h");
        }
      });
      const bool equal = std::memcmp(to, host.data(), kTotal) == 0;
      std::printf("  whole array to HOST, GPU decode + copy back (%-8s): %7.2f GB/s%s\n",
                  std::string(how).c_str(), kTotal / t / 1e9, equal ? "" : "  VALUES DIFFER");
    }
    CheckCuda(cudaFreeHost(pinned), "cudaFreeHost");
    // DEVICE results decoded on the CPUs and on the GPU; HOST results (pageable) read by the CPUs
    // and decoded on the GPU then copied back by CopyToHost.
    std::printf("  %6s %12s %12s %8s %12s %12s %8s\n", "chunks", "CPU us", "GPU us", "GPU/CPU",
                "HOST CPU us", "HOST GPU us", "GPU/CPU");
    for (size_t n = 1; n <= 1024; n *= 4) {
      const ResolvedSelection sel = FirstChunks(n);
      const size_t nbytes = static_cast<size_t>(sel.num_elements()) * 4;
      const std::function<void()> runs[4] = {
          [&] { Check(read(GpuDecodeMode::kNever, sel)); },
          [&] { Check(read(GpuDecodeMode::kAlways, sel)); },
          [&] { Check((*array)->ReadResolved(sel, back.data(), nbytes, {.pool = &pool})); },
          [&] {
            Check(read(GpuDecodeMode::kAlways, sel));
            Check(cuda::CopyToHost(staging, dev, {back.data(), nbytes}, pool));
          }};
      double median[4];
      for (int m = 0; m < 4; ++m) {
        std::vector<double> times;
        for (int r = 0; r < repeat + 2; ++r) {
          const double t0 = NowSeconds();
          runs[m]();
          times.push_back(NowSeconds() - t0);
        }
        std::sort(times.begin(), times.end());
        median[m] = times[times.size() / 2];
      }
      std::printf("  %6zu %12.0f %12.0f %8.2f %12.0f %12.0f %8.2f\n", n, median[0] * 1e6,
                  median[1] * 1e6, median[1] / median[0], median[2] * 1e6, median[3] * 1e6,
                  median[3] / median[2]);
    }
  }
  return 0;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
