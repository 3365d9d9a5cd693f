// decode_kernels: the GPU zstd kernel alone on R1-like chunks already in GPU memory, beside
// libzstd's single-core and all-core decode rates of the same chunks in the same run.
//
//   decode_kernels [--chunks N] [--repeat R] [--threads T]
//
// The chunks are R1's first N (default 1024, all of R1) 512 x 512 float32 chunks (1 MiB each),
// values as bench/reference_array.cc makes them, compressed with zstd level 3 without checksum
// (zarrd's R1 codec). The kernel's output is checked against the original values once. Rates
// are decoded bytes per second, the best of R runs.
#include <cuda_runtime.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/reference_array.h"
#include "common/cuda/zstd_kernel.h"
#include "common/decode/zstd_decode.h"

namespace {

using zarrd::decode::DecodeError;
using zarrd::decode::DecodeTask;

constexpr int64_t kExtent = 16384, kChunk = 512;
constexpr size_t kChunkBytes = kChunk * kChunk * 4;

struct Args {
  int chunks = 1024;
  int repeat = 5;
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (k == "--chunks")
      a.chunks = std::clamp(v, 1, int((kExtent / kChunk) * (kExtent / kChunk)));
    else if (k == "--repeat")
      a.repeat = std::max(1, v);
    else if (k == "--threads")
      a.threads = std::max(1, v);
    else {
      std::fprintf(stderr, "usage: decode_kernels [--chunks N] [--repeat R] [--threads T]\n");
      std::exit(2);
    }
  }
  return a;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ParallelFor(int n, int threads, const std::function<void(int)>& f) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < n; i = next++) f(i);
    });
  }
  for (auto& th : pool) th.join();
}

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "decode_kernels: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  const int n = a.chunks;
  std::vector<std::vector<uint8_t>> frames(n);
  std::vector<float> original(size_t(n) * kChunk * kChunk);
  ParallelFor(n, a.threads, [&](int c) {
    float* values = original.data() + size_t(c) * kChunk * kChunk;
    zarrd::bench::ReferenceChunk(c, kChunk, kExtent, values);
    frames[c].resize(ZSTD_compressBound(kChunkBytes));
    const size_t z = ZSTD_compress(frames[c].data(), frames[c].size(), values, kChunkBytes, 3);
    if (ZSTD_isError(z)) std::abort();
    frames[c].resize(z);
  });
  size_t compressed = 0;
  for (const auto& f : frames) compressed += f.size();
  const double decoded = double(n) * kChunkBytes;
  std::printf(
      "decode_kernels: %d chunks of 512 x 512 float32 (R1's), zstd level 3: %.1f MiB -> "
      "%.1f MiB (ratio %.2f)\n",
      n, compressed / 1048576.0, decoded / 1048576.0, decoded / compressed);

  // libzstd on the host: one thread, then all threads.
  std::vector<uint8_t> host_out(size_t(n) * kChunkBytes);
  std::memset(host_out.data(), 0, host_out.size());  // fault the pages in before timing
  auto lib_rate = [&](int threads) {
    double best = 1e30;
    for (int r = 0; r < a.repeat; ++r) {
      const double t0 = Now();
      ParallelFor(n, threads, [&](int c) {
        ZSTD_DCtx* dctx = ZSTD_createDCtx();
        const size_t got = ZSTD_decompressDCtx(dctx, host_out.data() + size_t(c) * kChunkBytes,
                                               kChunkBytes, frames[c].data(), frames[c].size());
        ZSTD_freeDCtx(dctx);
        if (got != kChunkBytes) std::abort();
      });
      best = std::min(best, Now() - t0);
    }
    return decoded / best / 1e9;
  };
  const double one_core = lib_rate(1);
  const double all_cores = lib_rate(a.threads);
  // Our core on one host thread (the serial path of one warp), over up to 64 chunks.
  double ours_best = 1e30;
  const int ours_n = std::min(n, 64);
  {
    std::unique_ptr<zarrd::decode::ZstdWorkspace> ws(new zarrd::decode::ZstdWorkspace);
    for (int r = 0; r < a.repeat; ++r) {
      const double t0 = Now();
      for (int c = 0; c < ours_n; ++c) {
        uint64_t written = 0;
        if (zarrd::decode::DecodeZstd(frames[c].data(), frames[c].size(),
                                      host_out.data() + size_t(c) * kChunkBytes, kChunkBytes,
                                      &written, ws.get()) != DecodeError::kOk) {
          std::abort();
        }
      }
      ours_best = std::min(ours_best, Now() - t0);
    }
  }
  std::printf("%-36s %8.2f GB/s\n", "our zstd core, 1 host core",
              ours_n * double(kChunkBytes) / ours_best / 1e9);
  std::printf("%-36s %8.2f GB/s\n", "libzstd, 1 core", one_core);
  std::printf("%-36s %8.2f GB/s  (%d threads)\n", "libzstd, all cores", all_cores, a.threads);

  // The kernel, chunks already in GPU memory.
  std::vector<size_t> offsets(n);
  std::vector<uint8_t> packed;
  for (int c = 0; c < n; ++c) {
    offsets[c] = packed.size();
    packed.insert(packed.end(), frames[c].begin(), frames[c].end());
  }
  uint8_t *src = nullptr, *dst = nullptr;
  DecodeTask* tasks = nullptr;
  Check(cudaMalloc(&src, packed.size()), "cudaMalloc src");
  Check(cudaMalloc(&dst, size_t(n) * kChunkBytes), "cudaMalloc dst");
  Check(cudaMalloc(&tasks, n * sizeof(DecodeTask)), "cudaMalloc tasks");
  Check(cudaMemcpy(src, packed.data(), packed.size(), cudaMemcpyHostToDevice), "upload");
  std::vector<DecodeTask> host_tasks(n);
  for (int c = 0; c < n; ++c) {
    host_tasks[c].src = src + offsets[c];
    host_tasks[c].src_size = frames[c].size();
    host_tasks[c].dst = dst + size_t(c) * kChunkBytes;
    host_tasks[c].dst_size = kChunkBytes;
  }
  const uint64_t scratch_bytes = zarrd::cuda::ZstdScratchBytes(n, uint64_t(n) * kChunkBytes);
  auto ws = zarrd::cuda::AllocateZstdScratch(scratch_bytes);
  if (!ws.ok()) {
    std::fprintf(stderr, "decode_kernels: %s\n", ws.status().ToString().c_str());
    return 1;
  }
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "event");
  Check(cudaEventCreate(&stop), "event");
  double best = 1e30;
  for (int r = 0; r < a.repeat + 1; ++r) {  // the first run warms up
    Check(cudaMemcpy(tasks, host_tasks.data(), n * sizeof(DecodeTask), cudaMemcpyHostToDevice),
          "tasks");
    Check(cudaEventRecord(start), "record");
    if (!zarrd::cuda::LaunchZstdDecode(tasks, n, *ws, nullptr).ok()) return 1;
    Check(cudaEventRecord(stop), "record");
    Check(cudaEventSynchronize(stop), "kernel");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    if (r > 0) best = std::min(best, ms / 1e3);
  }
  std::vector<DecodeTask> done(n);
  Check(cudaMemcpy(done.data(), tasks, n * sizeof(DecodeTask), cudaMemcpyDeviceToHost), "tasks");
  Check(cudaMemcpy(host_out.data(), dst, host_out.size(), cudaMemcpyDeviceToHost), "result");
  for (int c = 0; c < n; ++c) {
    if (done[c].error != DecodeError::kOk || done[c].written != kChunkBytes) {
      std::fprintf(stderr, "decode_kernels: chunk %d: %s\n", c,
                   zarrd::decode::DecodeErrorName(done[c].error));
      return 1;
    }
  }
  if (std::memcmp(host_out.data(), original.data(), host_out.size()) != 0) {
    std::fprintf(stderr, "decode_kernels: the kernel's output differs from the values\n");
    return 1;
  }
  std::printf("%-36s %8.2f GB/s  (%d tasks, %.0f MiB scratch, %.2f ms)\n",
              "GPU zstd kernels (chunks in GPU memory)", decoded / best / 1e9, n,
              scratch_bytes / 1048576.0, best * 1e3);
  zarrd::cuda::FreeZstdScratch(*ws);
  cudaFree(tasks);
  cudaFree(dst);
  cudaFree(src);
  return 0;
}
