// decode_kernels_blosc: the blosc and deflate decoding kernels alone, on chunks already in GPU
// memory, beside the reference libraries on the host's cores in the same run.
//
//   decode_kernels_blosc [--chunks N] [--repeat R] [--only lz4|zstd|gzip]
//
// The chunks are the first N (default 256) 512 x 512 float32 chunks (1 MiB each) of the
// reference array's values (bench/reference_array.h), encoded two ways:
//   R4-like: blosc lz4 clevel 5 with byte shuffle, typesize 4 (libblosc, its default blocks)
//   the same with zstd splits (blosc zstd clevel 5, byte shuffle)
//   R5-like: gzip level 5 (zlib)
// For each it prints the GB/s of output of: the batched kernel (one launch for all N chunks,
// best of R, events around the launch only), libblosc/zlib on one core, and on every core (one
// thread per core taking chunks in turn). The kernel's output is checked against the input.
// --only prints one of the rows.
#include <blosc.h>
#include <cuda_runtime.h>
#include <zlib.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/reference_array.h"
#include "common/cuda/blosc_kernel.h"
#include "common/cuda/deflate_kernel.h"
#include "common/util/thread_pool.h"

namespace {

using zarrd::decode::DecodeError;
using zarrd::decode::DecodeTask;
using Buffer = std::vector<uint8_t>;

constexpr int64_t kExtent = 16384, kChunk = 512;
constexpr size_t kChunkBytes = kChunk * kChunk * 4;

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

Buffer ChunkValues(int index) {
  std::vector<float> v(kChunk * kChunk);
  zarrd::bench::ReferenceChunk(index, kChunk, kExtent, v.data());
  Buffer out(kChunkBytes);
  std::memcpy(out.data(), v.data(), kChunkBytes);
  return out;
}

Buffer Blosc(const Buffer& in, const char* cname) {
  Buffer out(in.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(5, BLOSC_SHUFFLE, 4, in.size(), in.data(), out.data(),
                                   out.size(), cname, 0, 1);
  if (n <= 0) std::exit(1);
  out.resize(n);
  return out;
}

Buffer Gzip(const Buffer& in) {
  z_stream z{};
  deflateInit2(&z, 5, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
  Buffer out(deflateBound(&z, in.size()) + 32);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = in.size();
  z.next_out = out.data();
  z.avail_out = out.size();
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::exit(1);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

bool LibBlosc(const Buffer& in, uint8_t* out) {
  return blosc_decompress_ctx(in.data(), out, kChunkBytes, 1) == static_cast<int>(kChunkBytes);
}

bool LibGunzip(const Buffer& in, uint8_t* out) {
  z_stream z{};
  inflateInit2(&z, 31);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = in.size();
  z.next_out = out;
  z.avail_out = kChunkBytes;
  const int rc = inflate(&z, Z_FINISH);
  inflateEnd(&z);
  return rc == Z_STREAM_END && z.avail_out == 0;
}

// Seconds for `threads` threads to decode every chunk with `decode` (best of `repeat`).
double CpuSeconds(const std::vector<Buffer>& chunks, int threads, int repeat,
                  const std::function<bool(const Buffer&, uint8_t*)>& decode) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    const double t0 = zarrd::bench::NowSeconds();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        Buffer out(kChunkBytes);
        for (size_t i; (i = next++) < chunks.size();) {
          if (!decode(chunks[i], out.data())) failed = true;
        }
      });
    }
    for (auto& t : pool) t.join();
    if (failed) {
      std::fprintf(stderr, "the library failed to decode a chunk\n");
      std::exit(1);
    }
    best = std::min(best, zarrd::bench::NowSeconds() - t0);
  }
  return best;
}

// Seconds of the fastest of `repeat` launches of `launch` over the chunks (already uploaded),
// after checking one run's output against `values`.
double GpuSeconds(const std::vector<Buffer>& chunks, const std::vector<Buffer>& values, int repeat,
                  const std::function<void(DecodeTask*, uint32_t)>& launch) {
  size_t in_total = 0;
  for (const auto& c : chunks) in_total += (c.size() + 15) / 16 * 16;
  uint8_t *d_in = nullptr, *d_out = nullptr;
  DecodeTask* d_tasks = nullptr;
  Check(cudaMalloc(&d_in, in_total), "cudaMalloc");
  Check(cudaMalloc(&d_out, chunks.size() * kChunkBytes), "cudaMalloc");
  Check(cudaMalloc(&d_tasks, chunks.size() * sizeof(DecodeTask)), "cudaMalloc");
  std::vector<DecodeTask> tasks(chunks.size());
  size_t at = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    Check(cudaMemcpy(d_in + at, chunks[i].data(), chunks[i].size(), cudaMemcpyHostToDevice),
          "upload");
    tasks[i].src = d_in + at;
    tasks[i].src_size = chunks[i].size();
    tasks[i].dst = d_out + i * kChunkBytes;
    tasks[i].dst_size = kChunkBytes;
    at += (chunks[i].size() + 15) / 16 * 16;
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best_ms = 1e30f;
  for (int r = 0; r <= repeat; ++r) {  // run 0 warms up and is checked
    Check(cudaMemcpy(d_tasks, tasks.data(), tasks.size() * sizeof(DecodeTask),
                     cudaMemcpyHostToDevice),
          "tasks");
    cudaEventRecord(start);
    launch(d_tasks, static_cast<uint32_t>(tasks.size()));
    cudaEventRecord(stop);
    Check(cudaEventSynchronize(stop), "kernel");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (r > 0) best_ms = std::min(best_ms, ms);
    if (r == 0) {
      std::vector<DecodeTask> done(tasks.size());
      Check(cudaMemcpy(done.data(), d_tasks, done.size() * sizeof(DecodeTask),
                       cudaMemcpyDeviceToHost),
            "tasks back");
      Buffer out(kChunkBytes);
      for (size_t i = 0; i < done.size(); ++i) {
        Check(cudaMemcpy(out.data(), tasks[i].dst, kChunkBytes, cudaMemcpyDeviceToHost), "out");
        if (done[i].error != DecodeError::kOk || out != values[i]) {
          std::fprintf(stderr, "chunk %zu decoded wrong on the GPU: %s\n", i,
                       zarrd::decode::DecodeErrorName(done[i].error));
          std::exit(1);
        }
      }
    }
  }
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_tasks);
  return best_ms / 1e3;
}

// Prints one encoding's row: the kernel (`launch`) and the library (`decode`) on one core and on
// every core, over the same chunks.
void PrintRow(const char* name, const std::vector<Buffer>& chunks,
              const std::vector<Buffer>& values, int repeat,
              const std::function<void(DecodeTask*, uint32_t)>& launch,
              const std::function<bool(const Buffer&, uint8_t*)>& decode) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  size_t encoded = 0;
  for (const auto& c : chunks) encoded += c.size();
  const double gb = static_cast<double>(values.size()) * kChunkBytes / 1e9;
  const double gpu = GpuSeconds(chunks, values, repeat, launch);
  const double one = CpuSeconds(chunks, 1, repeat, decode);
  const double all = CpuSeconds(chunks, cores, repeat, decode);
  std::printf("%-34s %10.2f %9.1f GB/s %7.2f GB/s %7.2f GB/s\n", name, gb * 1e9 / encoded, gb / gpu,
              gb / one, gb / all);
}

}  // namespace

int main(int argc, char** argv) {
  int count = 256, repeat = 5;
  std::string only;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h" || i + 1 == argc) {
      std::printf("usage: decode_kernels_blosc [--chunks N] [--repeat R] [--only lz4|zstd|gzip]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
    if (a == "--chunks") count = std::atoi(argv[i + 1]);
    if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
    if (a == "--only") only = argv[i + 1];
  }
  if (!only.empty() && only != "lz4" && only != "zstd" && only != "gzip") {
    std::fprintf(stderr, "decode_kernels_blosc: --only takes lz4, zstd or gzip, not '%s'\n",
                 only.c_str());
    return 2;
  }
  const auto row = [&](const char* name) { return only.empty() || only == name; };
  std::vector<Buffer> values(count), blosc(count), blosc_zstd(count), gzip(count);
  const zarrd::Status prepared = zarrd::ThreadPool::Default().ParallelFor(count, [&](size_t i) {
    values[i] = ChunkValues(static_cast<int>(i));
    if (row("lz4")) blosc[i] = Blosc(values[i], "lz4");
    if (row("zstd")) blosc_zstd[i] = Blosc(values[i], "zstd");
    if (row("gzip")) gzip[i] = Gzip(values[i]);
    return zarrd::OkStatus();
  });
  if (!prepared.ok()) return 1;
  std::printf("%d chunks of 1 MiB (float32 512 x 512); %u host cores\n", count,
              std::thread::hardware_concurrency());
  std::printf("%-34s %10s %12s %12s %12s\n", "encoding", "ratio", "GPU kernel", "1 core",
              "all cores");

  std::vector<uint64_t> offsets;
  std::vector<DecodeTask> shape(count);
  for (auto& t : shape) t.dst_size = kChunkBytes;
  const uint64_t scratch_bytes = zarrd::cuda::BloscScratchLayout(shape, &offsets);
  uint8_t* d_scratch = nullptr;
  uint64_t* d_offsets = nullptr;
  Check(cudaMalloc(&d_scratch, scratch_bytes), "cudaMalloc");
  Check(cudaMalloc(&d_offsets, offsets.size() * 8), "cudaMalloc");
  Check(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice), "up");
  // The blosc kernel; `workspaces` for containers of zstd splits.
  const auto blosc_launch = [&](void* workspaces) {
    return [&, workspaces](DecodeTask* t, uint32_t n) {
      const auto s =
          zarrd::cuda::LaunchBloscDecode(t, n, d_scratch, d_offsets, workspaces, nullptr);
      if (!s.ok()) std::exit(1);
    };
  };
  if (row("lz4")) {
    PrintRow("R4-like blosc lz4 5 + shuffle", blosc, values, repeat, blosc_launch(nullptr),
             LibBlosc);
  }
  if (row("zstd")) {
    void* d_workspaces = nullptr;
    Check(cudaMalloc(&d_workspaces, zarrd::cuda::BloscZstdWorkspaceBytes()), "cudaMalloc");
    PrintRow("blosc zstd 5 + shuffle", blosc_zstd, values, repeat, blosc_launch(d_workspaces),
             LibBlosc);
    cudaFree(d_workspaces);
  }
  if (row("gzip")) {
    PrintRow(
        "R5-like gzip 5", gzip, values, repeat,
        [](DecodeTask* t, uint32_t n) {
          const auto s =
              zarrd::cuda::LaunchDeflateDecode(t, n, zarrd::cuda::DeflateWrapper::kGzip, nullptr);
          if (!s.ok()) std::exit(1);
        },
        LibGunzip);
  }
  cudaFree(d_scratch);
  cudaFree(d_offsets);
  return 0;
}
