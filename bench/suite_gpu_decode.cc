#include "bench/suite_gpu_decode.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "bench/bench_server.h"
#include "bench/bench_util.h"
#include "bench/reference_array.h"
#include "client/device_client.h"
#include "common/array/array.h"
#include "common/cuda/cuda_status.h"
#include "common/cuda/zstd_kernel.h"

namespace zarrd::bench {
namespace {

namespace pb = ::zarrd::v1;
constexpr const char* kArrays[] = {"r1", "r4", "r5"};
constexpr int64_t kChunk = 512;

void MustCuda(cudaError_t e, const char* what) { Must(cuda::CudaStatus(e, what), what); }

// One zarrd, three names for the reference folder: "gpu" decodes the arrays' chunks on the GPU,
// "cpu" on the CPUs (the per-array gpu_decode override), "auto" as the server's default does
// (the GPU, and the CPUs for chunks that would wait for it); "gmem" is a GPU store.
nlohmann::json Config(const std::string& dir, size_t nbytes) {
  nlohmann::json arrays = nlohmann::json::array();
  for (const char* a : kArrays) {
    arrays.push_back({{"store", "gpu"}, {"path", a}, {"gpu_decode", "always"}});
    arrays.push_back({{"store", "cpu"}, {"path", a}, {"gpu_decode", "never"}});
  }
  arrays.push_back({{"store", "gmem"}, {"path", "r1"}, {"gpu_decode", "always"}});
  const std::string root = std::filesystem::absolute(dir).string();
  return {{"stores",
           {{{"name", "gpu"}, {"root", root}},
            {{"name", "cpu"}, {"root", root}},
            {{"name", "auto"}, {"root", root}},
            {{"name", "gmem"}, {"kind", "gpu"}, {"capacity_bytes", nbytes}}}},
          {"arrays", arrays}};
}

// The server's user + system CPU seconds so far.
double ServerCpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks / sysconf(_SC_CLK_TCK);
}

// The chunk keys of an array (its metadata documents left out).
std::vector<std::string> ChunkKeys(Store& store, const std::string& path) {
  std::vector<std::string> keys;
  for (auto& key : Must(store.List(path + "/"), "list")) {
    const std::string name = key.substr(key.rfind('/') + 1);
    if (name != "zarr.json" && name != ".zarray" && name != ".zattrs") keys.push_back(key);
  }
  return keys;
}

struct Chunks {
  std::vector<Bytes> encoded, decoded;
  double decode_gbps = 0;  // all cores, from memory
};

Chunks DecodeOnCpus(const GpuDecodeSuite& suite, const std::string& path) {
  auto array = Must(Array::Open(suite.store, path), "open");
  const auto m = array->metadata();
  const ChunkSpec spec = m->chunk_spec();
  const auto keys = ChunkKeys(*suite.store, path);
  Chunks c;
  c.encoded.resize(keys.size());
  c.decoded.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    Must(suite.store->Get(keys[i], &c.encoded[i]), "chunk");
    c.decoded[i].resize(spec.num_bytes());
  }
  const double seconds = BestSeconds(suite.repeat, [&] {
    return suite.pool->ParallelFor(keys.size(), [&](size_t i) {
      return m->codec_chain->Decode(spec, c.encoded[i], c.decoded[i].data());
    });
  });
  c.decode_gbps = keys.size() * spec.num_bytes() / seconds / 1e9;
  return c;
}

// The zstd kernel alone on chunks already in GPU memory: GB/s of decoded bytes, best of repeat.
double ZstdKernelAlone(const Chunks& chunks, int repeat, bool* equal) {
  const size_t n = chunks.encoded.size(), chunk_bytes = chunks.decoded[0].size();
  size_t packed = 0;
  for (const Bytes& e : chunks.encoded) packed += (e.size() + 15) / 16 * 16;
  uint8_t *src = nullptr, *dst = nullptr;
  decode::DecodeTask* tasks = nullptr;
  MustCuda(cudaMalloc(&src, packed), "cudaMalloc");
  MustCuda(cudaMalloc(&dst, n * chunk_bytes), "cudaMalloc");
  MustCuda(cudaMalloc(&tasks, n * sizeof(decode::DecodeTask)), "cudaMalloc");
  std::vector<decode::DecodeTask> host_tasks(n);
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    const Bytes& e = chunks.encoded[i];
    MustCuda(cudaMemcpy(src + at, e.data(), e.size(), cudaMemcpyHostToDevice), "upload");
    host_tasks[i] = {.src = src + at,
                     .src_size = e.size(),
                     .dst = dst + i * chunk_bytes,
                     .dst_size = chunk_bytes};
    at += (e.size() + 15) / 16 * 16;
  }
  auto scratch =
      Must(cuda::AllocateZstdScratch(cuda::ZstdScratchBytes(n, n * chunk_bytes)), "zstd scratch");
  cudaEvent_t start, stop;
  MustCuda(cudaEventCreate(&start), "event");
  MustCuda(cudaEventCreate(&stop), "event");
  float best_ms = 1e30f;
  for (int r = 0; r < repeat + 1; ++r) {  // the first launch warms up
    MustCuda(cudaMemcpy(tasks, host_tasks.data(), n * sizeof(decode::DecodeTask),
                        cudaMemcpyHostToDevice),
             "tasks");
    MustCuda(cudaEventRecord(start), "event");
    Must(cuda::LaunchZstdDecode(tasks, static_cast<int>(n), scratch, nullptr), "launch");
    MustCuda(cudaEventRecord(stop), "event");
    MustCuda(cudaEventSynchronize(stop), "zstd kernel");
    float ms = 0;
    MustCuda(cudaEventElapsedTime(&ms, start, stop), "event");
    if (r > 0) best_ms = std::min(best_ms, ms);
  }
  *equal = true;
  Bytes back(chunk_bytes);
  for (size_t i = 0; i < n && *equal; ++i) {
    MustCuda(cudaMemcpy(back.data(), dst + i * chunk_bytes, chunk_bytes, cudaMemcpyDeviceToHost),
             "download");
    *equal = back == chunks.decoded[i];
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cuda::FreeZstdScratch(scratch);
  cudaFree(tasks);
  cudaFree(dst);
  cudaFree(src);
  return n * chunk_bytes / (best_ms / 1e3) / 1e9;
}

}  // namespace

std::vector<Row> GpuDecodeRows(const GpuDecodeSuite& suite) {
  const size_t n = suite.nbytes;
  auto peer = [&](const char* key) {
    const double s = suite.peers->value(key, 0.0);
    return s > 0 ? n / s / 1e9 : 0.0;
  };
  BenchServer server(suite.zarrd, Config(suite.dir, n));
  client::DeviceClient devices(server.client());
  std::vector<uint8_t> check(n);
  // A full DEVICE read: best of repeat (after one that maps the slab) in GB/s, and the server's
  // CPU seconds per GiB over the timed reads.
  auto device_read = [&](const char* store, const char* path, double* cpu_per_gib) {
    std::vector<double> times;
    double cpu0 = 0;
    for (int r = 0; r < suite.repeat + 1; ++r) {
      if (r == 1) cpu0 = ServerCpuSeconds(server.pid());
      const double t0 = NowSeconds();
      auto a = Must(devices.Get(store, path, {}), path);
      times.push_back(NowSeconds() - t0);
      if (r == suite.repeat) {
        MustCuda(cudaMemcpy(check.data(), a->data(), n, cudaMemcpyDeviceToHost), "d2h");
      }
    }
    if (cpu_per_gib) {
      *cpu_per_gib = (ServerCpuSeconds(server.pid()) - cpu0) / suite.repeat / (n / double(1 << 30));
    }
    suite.note_equal(std::memcmp(check.data(), suite.values, n) == 0,
                     (std::string(store) + "/" + path).c_str());
    return n / *std::min_element(times.begin() + 1, times.end()) / 1e9;
  };

  std::vector<Row> rows;
  double r1_cpu_decode = 0, r1_cpu_s = 0, r1_gpu_s = 0;
  Chunks r1_chunks;
  for (const char* path : kArrays) {
    Chunks chunks = DecodeOnCpus(suite, path);
    double cpu_s = 0, gpu_s = 0;
    const double on_gpu = device_read("gpu", path, &gpu_s);
    const double on_cpus = device_read("cpu", path, &cpu_s);
    const double on_auto = device_read("auto", path, nullptr);
    const double ts = peer((std::string(path) + "_gpu_s").c_str());
    const std::string what = std::string(path) == "r1"   ? "R1 (zstd 3)"
                             : std::string(path) == "r4" ? "R4 (v2 blosc lz4 5 + shuffle)"
                                                         : "R5 (v3 gzip 5)";
    rows.push_back({"full read " + what + " to GPU, GPU decode / auto / CPU decode",
                    Fmt("%.2f", on_gpu) + Fmt(" / %.2f", on_auto) + Fmt(" / %.2f GB/s", on_cpus),
                    Fmt("%.2f GB/s", ts),
                    Fmt("%.2f GB/s pinned H2D; ", suite.h2d_gbps) +
                        Fmt("%.2f GB/s all-core decode", chunks.decode_gbps),
                    Ratio(on_gpu, chunks.decode_gbps) + "x (auto " +
                        Ratio(on_auto, chunks.decode_gbps) + "x) all-core decode (R1, R4 >= 3), " +
                        Ratio(on_gpu, suite.h2d_gbps) + " of H2D, " + Ratio(on_gpu, ts) +
                        "x peer"});
    if (std::string(path) == "r1") {
      r1_cpu_decode = chunks.decode_gbps;
      r1_cpu_s = cpu_s;
      r1_gpu_s = gpu_s;
      r1_chunks = std::move(chunks);
    }
  }

  // R1 held compressed in the GPU store, read to the GPU (decoded where it is).
  {
    auto& c = server.client();
    auto r1 = Must(Array::Open(suite.store, "r1"), "open r1");
    Must(c.CreateArray("gmem", "r1", ToV3Json(*r1->metadata()), nullptr, true).status(), "gmem");
    auto region = Must(c.CreateHostRegion(n), "host region");
    std::memcpy(region->data(), suite.values, n);
    Must(c.SetFrom("gmem", "r1", pb::Selection(), *region, 0, n), "gmem write");
    const double gmem = device_read("gmem", "r1", nullptr);
    rows.push_back({"R1 held compressed in the GPU store, read to GPU", Fmt("%.2f GB/s", gmem), "",
                    Fmt("%.0f GB/s device-to-device copy", suite.d2d_gbps),
                    Ratio(gmem, 100) + " of 100 GB/s (>= 1)"});
  }

  bool equal = false;
  const double kernel = ZstdKernelAlone(r1_chunks, suite.repeat, &equal);
  suite.note_equal(equal, "zstd kernel alone");
  rows.push_back({"zstd kernel alone on R1's chunks in GPU memory", Fmt("%.2f GB/s", kernel), "",
                  Fmt("%.2f GB/s all-core decode", r1_cpu_decode),
                  Ratio(kernel, r1_cpu_decode) + "x all-core decode"});
  rows.push_back({"server CPU s per GiB read to GPU, R1, GPU decode / CPU decode",
                  Fmt("%.3f", r1_gpu_s) + Fmt(" / %.3f s", r1_cpu_s), "", "",
                  Ratio(r1_cpu_s, r1_gpu_s) + "x less (>= 5)"});

  // One 512 x 512 chunk of R1 at random to the GPU, p50 of 200 after 20.
  std::mt19937 rng(1);
  double p50[2];
  for (int mode = 0; mode < 2; ++mode) {
    std::vector<double> us;
    for (int i = 0; i < 220; ++i) {
      pb::Selection sel;
      for (int d = 0; d < 2; ++d) {
        const int64_t lo = (rng() % 32) * kChunk;
        auto* s = sel.add_items()->mutable_slice();
        s->set_start(lo);
        s->set_stop(lo + kChunk);
      }
      const double t0 = NowSeconds();
      Must(devices.Get(mode == 0 ? "gpu" : "cpu", "r1", sel).status(), "one chunk");
      if (i >= 20) us.push_back((NowSeconds() - t0) * 1e6);
    }
    p50[mode] = Percentiles(us).first;
  }
  rows.push_back({"one chunk of R1 to GPU, p50, GPU decode / CPU decode",
                  Fmt("%.0f", p50[0]) + Fmt(" / %.0f us", p50[1]), "", "",
                  "auto decodes reads under gpu_decode_min_chunks on the CPUs"});
  return rows;
}

}  // namespace zarrd::bench
