// engine_read: full read of the 1 GiB reference array by the engine alone (no RPC), beside the
// raw zstd decode rate of the same chunks on the same number of threads.
//
//   engine_read [--dir DIR] [--threads N] [--repeat R]
//
// DIR (default ./zarrd-bench-data) keeps the array between runs. Both figures decode into
// buffers that were touched before timing, so page faults are not counted in either.
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/reference_array.h"

namespace zarrd::bench {
namespace {

struct Args {
  std::string dir = "zarrd-bench-data";
  size_t threads = std::max(1u, std::thread::hardware_concurrency());  // at least 1
  int repeat = 3;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--dir") a.dir = argv[i + 1];
    if (k == "--threads") a.threads = std::max<size_t>(1, std::stoul(argv[i + 1]));
    if (k == "--repeat") a.repeat = std::stoi(argv[i + 1]);
  }
  return a;
}

int Main(int argc, char** argv) {
  Args args = Parse(argc, argv);
  // ParallelFor runs on the pool and the calling thread: threads - 1 workers.
  ThreadPool pool(args.threads - 1);
  auto store = OpenLocalStore(args.dir);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  auto array = OpenOrWriteReference(StoreHandle(*store), "r1", {}, pool);
  if (!array.ok()) {
    std::fprintf(stderr, "%s\n", array.status().ToString().c_str());
    return 1;
  }
  auto m = (*array)->metadata();
  const auto grid = m->grid_shape();
  const size_t chunk_bytes = m->chunk_spec().num_bytes();
  const size_t total = static_cast<size_t>(m->shape[0] * m->shape[1]) * 4;

  // The chunks' encoded bytes in memory, for the raw decode rate.
  std::vector<Bytes> encoded(static_cast<size_t>(grid[0] * grid[1]));
  size_t compressed = 0;
  for (int64_t i = 0; i < grid[0]; ++i) {
    for (int64_t j = 0; j < grid[1]; ++j) {
      Bytes& b = encoded[i * grid[1] + j];
      auto found = (*store)->Get(JoinKey("r1", m->ChunkKey({i, j})), &b);
      if (!found.ok() || !*found) {
        std::fprintf(stderr, "chunk %ld,%ld missing\n", long(i), long(j));
        return 1;
      }
      compressed += b.size();
    }
  }
  std::printf(
      "engine_read: %ld x %ld float32, %ld x %ld chunks, bytes+zstd(3): %zu chunks, "
      "%.1f MiB compressed (%.2f of raw)\n",
      long(m->shape[0]), long(m->shape[1]), long(m->chunk_shape[0]), long(m->chunk_shape[1]),
      encoded.size(), compressed / 1048576.0, double(compressed) / total);
  std::printf("threads: %zu\n", args.threads);

  std::vector<Bytes> scratch(args.threads + 1, Bytes(chunk_bytes, 1));
  std::vector<ZSTD_DCtx*> contexts;
  for (size_t t = 0; t <= args.threads; ++t) contexts.push_back(ZSTD_createDCtx());
  std::atomic<size_t> next_slot{0};
  double best_raw = 1e30;
  for (int r = 0; r < args.repeat; ++r) {
    next_slot = 0;
    const double t0 = NowSeconds();
    thread_local size_t slot = SIZE_MAX;
    Status s = pool.ParallelFor(encoded.size(), [&](size_t n) {
      if (slot == SIZE_MAX || slot > args.threads) slot = next_slot++ % (args.threads + 1);
      size_t got = ZSTD_decompressDCtx(contexts[slot], scratch[slot].data(), chunk_bytes,
                                       encoded[n].data(), encoded[n].size());
      return got == chunk_bytes ? OkStatus() : DataLoss("raw decode failed");
    });
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    best_raw = std::min(best_raw, NowSeconds() - t0);
  }
  for (auto* c : contexts) ZSTD_freeDCtx(c);

  std::vector<uint8_t> out(total);
  std::memset(out.data(), 0, out.size());  // fault the pages in before timing
  // In place (the default) and staged through a per-thread buffer as for reads into shared
  // memory (IoOptions::result_shared), alternating so that drift hits both alike.
  double best_engine = 1e30, best_staged = 1e30;
  for (int r = 0; r < args.repeat; ++r) {
    for (bool staged : {false, true}) {
      const double t0 = NowSeconds();
      Status s =
          (*array)->Read({}, out.data(), out.size(), {.pool = &pool, .result_shared = staged});
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      double& best = staged ? best_staged : best_engine;
      best = std::min(best, NowSeconds() - t0);
    }
  }
  const double raw_rate = total / best_raw / 1e9, engine_rate = total / best_engine / 1e9;
  const double staged_rate = total / best_staged / 1e9;
  std::printf("raw zstd decode, chunks in memory: %6.2f GB/s  (best of %d, %.3f s)\n", raw_rate,
              args.repeat, best_raw);
  std::printf("engine full read, local store:     %6.2f GB/s  (best of %d, %.3f s)\n", engine_rate,
              args.repeat, best_engine);
  std::printf("  staged, as into shared memory:   %6.2f GB/s  (%.1f %% of in place)\n", staged_rate,
              100.0 * staged_rate / engine_rate);
  std::printf("engine / raw decode:               %6.1f %%   (target >= 90 %%)\n",
              100.0 * engine_rate / raw_rate);
  return 0;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
