// device_read: the 1 GiB reference array read into GPU memory, beside (a) the engine's host
// read, (b) pinned host-to-device bandwidth and (c) tensorstore's read plus a CuPy upload, and
// the GPU memory store's read beside a device-to-device copy, all in one run.
//
//   device_read [--dir DIR] [--zarrd PATH] [--python PYTHON] [--repeat R] [--server-log LEVEL]
//               [--gpu-decode auto|always|never]
//
// Rates are array bytes (1 GiB) over the best of R runs. The engine's DEVICE read runs twice, its
// chunks decoded on the CPUs and on the GPU; zarrd runs with --gpu-decode (default auto).
#include <cuda_runtime.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/bench_server.h"
#include "bench/gpu_limits.h"
#include "bench/reference_array.h"
#include "client/device_client.h"
#include "common/cuda/copy_kernels.h"
#include "common/cuda/cuda_status.h"
#include "common/cuda/device_sink.h"
#include "common/cuda/store_gpu.h"
#include "common/metadata/json_document.h"

namespace zarrd::bench {
namespace {

namespace pb = ::zarrd::v1;
constexpr size_t kTotal = size_t{16384} * 16384 * 4;

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "device_read: %s\n", s.ToString().c_str());
    std::exit(1);
  }
}

void CheckCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "device_read: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double Rate(double seconds) { return kTotal / seconds / 1e9; }

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

// Walks a GPU store read without copying anything: the engine's share of that read's time.
class PlanOnlySink final : public ChunkSink {
 public:
  Result<Buffer> Begin(const Placement&, size_t) override { return Internal("not decoding"); }
  Status Commit(const Placement&, const Buffer&) override { return OkStatus(); }
  Status Fill(const Placement&, const uint8_t*, size_t) override { return OkStatus(); }
  bool accepts_device_values(int) const override { return true; }
  Status CommitDevice(const Placement&, const DeviceValue&) override { return OkStatus(); }
};

// The peer: tensorstore + CuPy in another process; returns its best read+upload seconds.
double TensorstoreCupy(const std::string& python, const std::string& script,
                       const std::string& path, int repeat) {
  const std::string cmd =
      python + " " + script + " " + path + " --repeat " + std::to_string(repeat) + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (!p || ::pclose(p) != 0) {
    std::fprintf(stderr, "device_read: the tensorstore peer failed:\n%s\n", out.c_str());
    return 0;
  }
  auto j = nlohmann::json::parse(out.substr(out.rfind('{')));
  return j["read_upload_s"].get<double>();
}

int Main(int argc, char** argv) {
  std::string dir = "zarrd-bench-data", zarrd, python = "python3", server_log = "warn";
  std::string gpu_decode = "auto";
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--dir") dir = argv[i + 1];
    if (k == "--zarrd") zarrd = argv[i + 1];
    if (k == "--python") python = argv[i + 1];
    if (k == "--repeat") repeat = std::stoi(argv[i + 1]);
    if (k == "--server-log") server_log = argv[i + 1];
    if (k == "--gpu-decode") gpu_decode = argv[i + 1];
  }
  const auto self = std::filesystem::canonical("/proc/self/exe").parent_path();
  if (zarrd.empty()) zarrd = FindZarrd();
  std::string script = (std::filesystem::path(__FILE__).parent_path() / "tensorstore_cupy.py");
  if (!std::filesystem::exists(script)) script = (self / "tensorstore_cupy.py").string();
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(hw - 1);
  StoreHandle store(*OpenLocalStore(dir));
  auto r1 = OpenOrWriteReference(store, "r1", {}, pool);
  Check(r1.status());

  cudaDeviceProp prop;
  CheckCuda(cudaGetDeviceProperties(&prop, 0), "device");
  std::printf(
      "device_read: 16384 x 16384 float32 (1 GiB), 512 x 512 chunks, bytes+zstd(3); %s, "
      "%zu cores; best of %d\n",
      prop.name, hw, repeat);

  // (a) the engine's host read.
  uint8_t* host = nullptr;
  CheckCuda(cudaHostAlloc(reinterpret_cast<void**>(&host), kTotal, cudaHostAllocDefault), "pinned");
  std::vector<uint8_t> pageable(kTotal);
  std::memset(pageable.data(), 0, kTotal);
  const double engine_host = Rate(BestSeconds(
      repeat, [&] { return (*r1)->Read({}, pageable.data(), kTotal, {.pool = &pool}); }));
  std::memcpy(host, pageable.data(), kTotal);

  // (b) pinned host-to-device bandwidth, and a device-to-device copy.
  uint8_t *dev = nullptr, *dev2 = nullptr;
  CheckCuda(cudaMalloc(&dev, kTotal), "cudaMalloc");
  CheckCuda(cudaMalloc(&dev2, kTotal), "cudaMalloc");
  const auto [h2d, d2d] = MeasureCopyLimits(host, dev, dev2, kTotal, repeat);

  // The engine's DEVICE read, in-process.
  cuda::StagingPool staging(0, 2 * hw + 2);
  auto resolved = *ResolveSelection({}, {16384, 16384});
  // Its rate, its CPU seconds per GiB (of every run), and whether its values are R1's.
  std::vector<uint8_t> back(kTotal);
  auto engine_read = [&](GpuDecodeMode mode, double* cpu_s_per_gib, bool* equal) {
    const double cpu0 = CpuSeconds();
    const double rate = Rate(BestSeconds(repeat, [&] {
      cudaMemset(dev, 0, kTotal);
      cuda::DeviceSink sink(staging, dev, 4, nullptr, {.mode = mode});
      return (*r1)->ReadToSink(resolved, sink, {.pool = &pool});
    }));
    *cpu_s_per_gib = (CpuSeconds() - cpu0) / repeat / (kTotal / double(1 << 30));
    CheckCuda(cudaMemcpy(back.data(), dev, kTotal, cudaMemcpyDeviceToHost), "d2h");
    *equal = std::memcmp(back.data(), host, kTotal) == 0;
    return rate;
  };
  double engine_cpu_s = 0, engine_gpu_decode_cpu_s = 0;
  bool engine_equal = false, engine_gpu_decode_equal = false;
  const double engine_device = engine_read(GpuDecodeMode::kNever, &engine_cpu_s, &engine_equal);
  const double engine_gpu_decode =
      engine_read(GpuDecodeMode::kAlways, &engine_gpu_decode_cpu_s, &engine_gpu_decode_equal);

  // The GPU memory store, in-process: the same values stored raw (R2), read device to device.
  auto gmem = *cuda::MakeGpuStore({.name = "bench",
                                   .device = 0,
                                   .capacity_bytes = 2 * kTotal,
                                   .on_host = IsMetadataDocumentKey});
  ArrayMetadata raw = *(*r1)->metadata();
  raw.codecs = nlohmann::json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])");
  auto r2 = *Array::Create(StoreHandle(gmem), "r2", raw);
  Check(r2->Write({}, host, kTotal, {.pool = &pool}));
  const double gpu_store_engine = Rate(BestSeconds(repeat + 2, [&] {
    cuda::DeviceSink sink(staging, dev2, 4);
    return r2->ReadToSink(resolved, sink, {.pool = &pool});
  }));
  // The same after the pool's threads slept 5 ms, as a server's do between requests.
  double idle_best = 1e9;
  for (int r = 0; r < repeat + 2; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const double t0 = NowSeconds();
    cuda::DeviceSink sink(staging, dev2, 4);
    Check(r2->ReadToSink(resolved, sink, {.pool = &pool}));
    idle_best = std::min(idle_best, NowSeconds() - t0);
  }
  const double gpu_store_engine_idle = Rate(idle_best);
  ThreadPool no_helpers(0);
  const double planning_one_thread_s = BestSeconds(repeat + 2, [&] {
    PlanOnlySink sink;
    return r2->ReadToSink(resolved, sink, {.pool = &no_helpers});
  });
  const double planning_s = BestSeconds(repeat + 2, [&] {
    PlanOnlySink sink;
    return r2->ReadToSink(resolved, sink, {.pool = &pool});
  });
  CheckCuda(cudaMemcpy(back.data(), dev2, kTotal, cudaMemcpyDeviceToHost), "d2h");
  const bool store_equal = std::memcmp(back.data(), host, kTotal) == 0;
  // The copy kernel alone on the same pattern (it overwrites dev2, checked above): 1024 chunks of
  // 512 x 512 placed in the result.
  std::vector<cuda::StridedCopyDesc> descs;
  for (int64_t ci = 0; ci < 32; ++ci) {
    for (int64_t cj = 0; cj < 32; ++cj) {
      const int64_t chunk_strides[2] = {512 * 4, 4}, result_strides[2] = {16384 * 4, 4};
      const int64_t counts[2] = {512, 512};
      descs.push_back(*cuda::MakeCopyDesc(dev + (ci * 32 + cj) * (512 * 512 * 4), chunk_strides,
                                          dev2 + (ci * 512 * 16384 + cj * 512) * 4, result_strides,
                                          counts, 2, 4));
    }
  }
  uint8_t *desc_pinned = nullptr, *desc_device = nullptr;
  const size_t desc_bytes = descs.size() * sizeof(cuda::StridedCopyDesc);
  CheckCuda(cudaHostAlloc(reinterpret_cast<void**>(&desc_pinned), desc_bytes, 0), "pinned");
  CheckCuda(cudaMalloc(&desc_device, desc_bytes), "cudaMalloc");
  cudaEvent_t kernel_start, kernel_end;
  CheckCuda(cudaEventCreate(&kernel_start), "event");
  CheckCuda(cudaEventCreate(&kernel_end), "event");
  float kernel_ms = 1e9f;
  for (int r = 0; r < repeat + 2; ++r) {
    CheckCuda(cudaEventRecord(kernel_start), "event");
    Check(cuda::LaunchStridedCopies(descs.data(), descs.size(), desc_pinned, desc_device, nullptr));
    CheckCuda(cudaEventRecord(kernel_end), "event");
    CheckCuda(cudaEventSynchronize(kernel_end), "kernel");
    float ms = 0;
    CheckCuda(cudaEventElapsedTime(&ms, kernel_start, kernel_end), "event");
    kernel_ms = std::min(kernel_ms, ms);
  }
  const double kernel_rate = Rate(kernel_ms / 1e3);

  // Through zarrd, from this process: a DEVICE read of R1, and of R2 in zarrd's GPU store.
  BenchServer server(zarrd,
                     {{"stores",
                       {{{"name", "bench"}, {"root", std::filesystem::absolute(dir).string()}},
                        {{"name", "gmem"}, {"kind", "gpu"}, {"capacity_bytes", 2 * kTotal}}}},
                      {"log_level", server_log},
                      {"gpu_decode", gpu_decode}});
  client::Client* c = &server.client();
  client::DeviceClient devices(*c);
  // Each read's time through zarrd (the first maps the slab: warm-up, not counted).
  auto served = [&](const std::string& st, const std::string& path, int reads,
                    std::vector<double>* times) {
    for (int r = 0; r < reads + 1; ++r) {
      const double t0 = NowSeconds();
      auto a = devices.Get(st, path, {});
      Check(a.status());
      if (r > 0) times->push_back(NowSeconds() - t0);
      if (r == reads) {
        CheckCuda(cudaMemcpy(back.data(), (*a)->data(), kTotal, cudaMemcpyDeviceToHost), "d2h");
      }
    }
    return std::memcmp(back.data(), host, kTotal) == 0;
  };
  std::vector<double> served_r1, served_r2, served_r2_region;
  const bool served_r1_equal = served("bench", "r1", repeat, &served_r1);
  std::vector<double> served_r1_waited;
  devices.set_answer_before_ready(false);
  const bool served_r1_waited_equal = served("bench", "r1", repeat, &served_r1_waited);
  devices.set_answer_before_ready(true);
  Check(c->CreateArray("gmem", "r2", ToV3Json(*r2->metadata())).status());
  Check(c->Set("gmem", "r2", {}, host, kTotal));
  const bool served_r2_equal = served("gmem", "r2", 4 * repeat, &served_r2);
  std::vector<double> served_r2_waited;
  devices.set_answer_before_ready(false);
  const bool served_r2_waited_equal = served("gmem", "r2", 4 * repeat, &served_r2_waited);
  devices.set_answer_before_ready(true);
  // The same read into memory of this process registered once: no lease, no allocation.
  CheckCuda(cudaMemset(dev, 0, kTotal), "memset");
  auto region = devices.RegisterRegion(dev, kTotal);
  Check(region.status());
  for (int r = 0; r < 4 * repeat + 1; ++r) {
    const double t0 = NowSeconds();
    Check(devices.GetInto("gmem", "r2", {}, **region, 0, kTotal));
    if (r > 0) served_r2_region.push_back(NowSeconds() - t0);
  }
  CheckCuda(cudaMemcpy(back.data(), dev, kTotal, cudaMemcpyDeviceToHost), "d2h");
  const bool served_region_equal = std::memcmp(back.data(), host, kTotal) == 0;
  region->reset();
  auto best = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  const double served_r1_s = best(served_r1), served_r2_s = best(served_r2);
  const uint64_t opens = devices.handle_opens();
  server.Stop();

  // (c) the peer.
  const double peer_s = TensorstoreCupy(
      python, script, std::filesystem::absolute(dir / std::filesystem::path("r1")).string(),
      repeat);
  const double peer = peer_s > 0 ? Rate(peer_s) : 0;

  auto row = [](const char* what, double gbs, const std::string& note) {
    std::printf("%-46s %9.2f GB/s  %s\n", what, gbs, note.c_str());
  };
  auto pct = [](double a, double b) {
    return b > 0 ? std::to_string(int(100 * a / b + 0.5)) + "%" : "n/a";
  };
  auto times = [](double a, double b) {
    char s[32];
    std::snprintf(s, sizeof s, "%.2fx", b > 0 ? a / b : 0.0);
    return std::string(s);
  };
  row("(a) engine host read", engine_host, "");
  row("(b) pinned host-to-device copy", h2d, "");
  row("(c) tensorstore read + CuPy upload", peer, peer > 0 ? "" : "(peer failed)");
  auto cpu_note = [](double s) {
    char t[48];
    std::snprintf(t, sizeof t, ", %.2f CPU s/GiB", s);
    return std::string(t);
  };
  row("engine DEVICE read, in-process, CPU decode", engine_device,
      pct(engine_device, engine_host) + " of (a), " + times(engine_device, peer) + " (c)" +
          cpu_note(engine_cpu_s) + (engine_equal ? "" : "  VALUES DIFFER"));
  row("engine DEVICE read, in-process, GPU decode", engine_gpu_decode,
      times(engine_gpu_decode, engine_device) + " CPU decode, " + pct(engine_gpu_decode, h2d) +
          " of (b), " + times(engine_gpu_decode, peer) + " (c)" +
          cpu_note(engine_gpu_decode_cpu_s) + (engine_gpu_decode_equal ? "" : "  VALUES DIFFER"));
  row(("zarrd DEVICE read, client process, gpu_decode " + gpu_decode).c_str(), Rate(served_r1_s),
      pct(Rate(served_r1_s), engine_host) + " of (a) [target 90%], " +
          times(Rate(served_r1_s), peer) + " (c) [target 2x]" +
          (served_r1_equal ? "" : "  VALUES DIFFER"));
  row("  the same, the server answering once complete", Rate(best(served_r1_waited)),
      pct(Rate(best(served_r1_waited)), engine_host) + " of (a)" +
          (served_r1_waited_equal ? "" : "  VALUES DIFFER"));
  row("device-to-device copy", d2d, "");
  row("GPU store DEVICE read (R2), in-process", gpu_store_engine,
      pct(gpu_store_engine, d2d) + " of the copy" + (store_equal ? "" : "  VALUES DIFFER"));
  row("  the same after the pool idled 5 ms", gpu_store_engine_idle,
      pct(gpu_store_engine_idle, d2d) + " of the copy");
  row("  the copy kernel alone (1024 chunk blocks)", kernel_rate,
      pct(kernel_rate, d2d) + " of the copy");
  std::printf("%-46s %9.0f us  (the chunk walk, without the copy kernel)\n",
              "  of which planning the 1024 chunks", planning_s * 1e6);
  std::printf("%-46s %9.0f us\n", "  planning them on one thread", planning_one_thread_s * 1e6);
  row("GPU store DEVICE read (R2), client process", Rate(served_r2_s),
      pct(Rate(served_r2_s), d2d) + " of the copy [target 1000 GB/s]" +
          (served_r2_equal ? "" : "  VALUES DIFFER"));
  row("  the same, the server answering once complete", Rate(best(served_r2_waited)),
      pct(Rate(best(served_r2_waited)), d2d) + " of the copy" +
          (served_r2_waited_equal ? "" : "  VALUES DIFFER"));
  row("  the same into a registered device region", Rate(best(served_r2_region)),
      pct(Rate(best(served_r2_region)), d2d) + " of the copy" +
          (served_region_equal ? "" : "  VALUES DIFFER"));
  auto print_us = [](const char* what, const std::vector<double>& v) {
    std::printf("  %s, each read (us):", what);
    for (double s : v) std::printf(" %.0f", s * 1e6);
    std::printf("\n");
  };
  print_us("into a lease", served_r2);
  print_us("into a lease, answered once complete", served_r2_waited);
  print_us("into the region", served_r2_region);
  std::printf("IPC handles opened by the client: %llu (one per slab)\n",
              static_cast<unsigned long long>(opens));
  return engine_equal && engine_gpu_decode_equal && store_equal && served_r1_equal &&
                 served_r1_waited_equal && served_r2_equal && served_r2_waited_equal &&
                 served_region_equal
             ? 0
             : 1;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
