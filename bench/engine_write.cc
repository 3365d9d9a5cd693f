// engine_write: where a full write of the 1 GiB reference array spends its time, by the engine
// alone (no RPC): the zstd compress rate of its chunks on all threads (the limit), then the
// same write into a memory store (the engine's copies and checks added), into a new local
// array (file creation), over an existing one (replacing files), and the local store's
// writes of the already-compressed chunks alone.
//
//   engine_write [--dir DIR] [--threads N] [--repeat R]
//
// Every write is read back and compared with the input.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/reference_array.h"

namespace zarrd::bench {
namespace {

int Fail(const Status& s) {
  std::fprintf(stderr, "engine_write: %s\n", s.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  std::string dir = "zarrd-bench-data";
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--dir") dir = argv[i + 1];
    if (k == "--threads") threads = std::max<size_t>(1, std::stoul(argv[i + 1]));
    if (k == "--repeat") repeat = std::stoi(argv[i + 1]);
  }
  ThreadPool pool(threads - 1);
  auto store = OpenLocalStore(dir);
  if (!store.ok()) return Fail(store.status());
  const StoreHandle local(*store);
  auto r1 = OpenOrWriteReference(local, "r1", {}, pool);
  if (!r1.ok()) return Fail(r1.status());
  auto m = (*r1)->metadata();
  const size_t total = static_cast<size_t>(m->shape[0] * m->shape[1]) * 4;
  std::vector<uint8_t> input(total), back(total);
  if (Status s = (*r1)->Read({}, input.data(), total, {.pool = &pool}); !s.ok()) return Fail(s);
  auto rate = [&](double seconds) { return total / seconds / 1e9; };

  // The limit: every chunk compressed from contiguous memory, on all threads.
  const ChunkSpec spec = m->chunk_spec();
  const size_t n_chunks = total / spec.num_bytes();
  std::vector<Bytes> chunks(n_chunks), encoded(n_chunks);
  for (size_t i = 0; i < n_chunks; ++i) {
    chunks[i].assign(input.begin() + i * spec.num_bytes(),
                     input.begin() + (i + 1) * spec.num_bytes());
  }
  const double compress = rate(BestSeconds(repeat, [&] {
    return pool.ParallelFor(n_chunks, [&](size_t i) {
      return m->codec_chain->Encode(spec, chunks[i].data(), &encoded[i]);
    });
  }));

  bool all_equal = true;
  auto write_rate = [&](StoreHandle target, const std::string& path, bool fresh) {
    double best = 1e9;
    Result<std::shared_ptr<Array>> a = Internal("not created");
    for (int r = 0; r < repeat; ++r) {
      if (fresh || r == 0) {
        if (Status s = target->DeletePrefix(path + "/"); !s.ok()) Fail(s), std::exit(1);
        a = Array::Create(target, path, *m);
        if (!a.ok()) Fail(a.status()), std::exit(1);
      }
      if (!fresh && r == 0) {  // the files exist before the timed runs
        if (Status s = (*a)->Write({}, input.data(), total, {.pool = &pool}); !s.ok()) {
          Fail(s), std::exit(1);
        }
      }
      const double t0 = NowSeconds();
      if (Status s = (*a)->Write({}, input.data(), total, {.pool = &pool}); !s.ok()) {
        Fail(s), std::exit(1);
      }
      best = std::min(best, NowSeconds() - t0);
      std::memset(back.data(), 0, total);
      if (Status s = (*a)->Read({}, back.data(), total, {.pool = &pool}); !s.ok()) {
        Fail(s), std::exit(1);
      }
      all_equal &= std::memcmp(back.data(), input.data(), total) == 0;
    }
    return rate(best);
  };
  const double to_memory = write_rate(StoreHandle(MakeMemoryStore()), "w", false);
  const double fresh_files = write_rate(local, "w_fresh", true);
  const double replaced_files = write_rate(local, "w_over", false);
  // The local store's share: the compressed chunks written over existing files.
  const double store_only = rate(BestSeconds(repeat, [&] {
    return pool.ParallelFor(n_chunks, [&](size_t i) {
      return (*store)->Set("w_over/c/" + std::to_string(i / 32) + "/" + std::to_string(i % 32),
                           encoded[i]);
    });
  }));
  size_t compressed = 0;
  for (const auto& e : encoded) compressed += e.size();

  std::printf(
      "engine_write: %zu x %zu float32, %zu chunks, zstd level 3 -> %.1f %% of the "
      "bytes; %zu threads, best of %d\n",
      static_cast<size_t>(m->shape[0]), static_cast<size_t>(m->shape[1]), n_chunks,
      100.0 * compressed / total, threads, repeat);
  auto row = [&](const char* what, double gbs) {
    std::printf("%-52s %7.2f GB/s  %5.2f of compress\n", what, gbs, gbs / compress);
  };
  row("compress the chunks (limit)", compress);
  row("write into a memory store", to_memory);
  row("write a new local array (files created)", fresh_files);
  row("write over a local array (files replaced)", replaced_files);
  row("local store alone: compressed chunks over files", store_only);
  if (!all_equal) std::printf("engine_write: VALUES DIFFER after a write\n");
  return all_equal ? 0 : 1;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
