// suite: zarrd's side of bench/run. Reads the reference arrays tensorstore wrote (R1 zstd, R2
// raw, R3 sharded; R4 v2 blosc and R5 gzip for the GPU decoding rows), measures zarrd and the
// machine's limits in this one run, joins the peer figures bench/peers.py measured, and prints the
// table of issue 6 (markdown).
//
//   suite --dir DIR --peers PEERS.json [--repeat R] [--zarrd PATH]
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "bench/bench_server.h"
#include "bench/bench_util.h"
#include "bench/gpu_limits.h"
#include "bench/reference_array.h"
#include "bench/suite_gpu_decode.h"
#include "client/device_client.h"
#include "client/piece_reader.h"
#include "common/cuda/cuda_status.h"

namespace zarrd::bench {
namespace {

namespace pb = ::zarrd::v1;
constexpr int64_t kN = 16384, kChunk = 512;
constexpr size_t kTotal = size_t{kN} * kN * 4;

void MustCuda(cudaError_t e, const char* what) { Must(cuda::CudaStatus(e, what), what); }

double Rate(double seconds, size_t bytes = kTotal) { return bytes / seconds / 1e9; }

uint64_t ProcStatusKiB(pid_t pid, const char* field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(std::strlen(field)));
  }
  return 0;
}

// A zarrd serving DIR as "bench" and a GPU store "gmem", with StreamBytes for the bare-stream rows.
nlohmann::json SuiteConfig(const std::string& dir) {
  return {{"stores",
           {{{"name", "bench"}, {"root", std::filesystem::absolute(dir).string()}},
            {{"name", "gmem"}, {"kind", "gpu"}, {"capacity_bytes", 2 * kTotal}}}},
          {"enable_stream_bytes", true},
          {"stream_bytes_max_bytes", 2 * kTotal}};
}

int Main(int argc, char** argv) {
  std::string dir, peers_path, zarrd;
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--dir") dir = argv[i + 1];
    if (k == "--peers") peers_path = argv[i + 1];
    if (k == "--zarrd") zarrd = argv[i + 1];
    if (k == "--repeat") repeat = std::stoi(argv[i + 1]);
  }
  if (zarrd.empty()) zarrd = FindZarrd();
  nlohmann::json peers = nlohmann::json::object();
  if (!peers_path.empty()) peers = nlohmann::json::parse(std::ifstream(peers_path));
  auto peer = [&](const char* key) { return peers.value(key, 0.0); };

  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(hw - 1);
  StoreHandle store(Must(OpenLocalStore(dir), "store"));
  auto r1 = Must(Array::Open(store, "r1"), "open r1 (run bench/make_reference.py)");
  auto r2 = Must(Array::Open(store, "r2"), "open r2");
  auto r3 = Must(Array::Open(store, "r3"), "open r3");
  std::printf("suite: %zu cores, best of %d; arrays written by tensorstore in %s\n", hw, repeat,
              dir.c_str());

  // The values, read by the engine in-process (the second source every read is compared with).
  uint8_t* host = nullptr;
  MustCuda(cudaHostAlloc(reinterpret_cast<void**>(&host), kTotal, cudaHostAllocDefault), "pinned");
  Must(r1->Read({}, host, kTotal, {.pool = &pool}), "engine read r1");
  std::vector<uint8_t> check(kTotal);
  auto same_as_host = [&](const uint8_t* data) { return std::memcmp(data, host, kTotal) == 0; };

  // Limits: decode and compress rates of R1's chunks on all cores, one chunk on one thread.
  const auto keys = Must(store->List("r1/c/"), "list r1");
  std::vector<Bytes> encoded(keys.size()), decoded(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) Must(store->Get(keys[i], &encoded[i]), "chunk");
  auto m1 = r1->metadata();
  const ChunkSpec spec = m1->chunk_spec();
  for (auto& d : decoded) d.resize(spec.num_bytes());
  const double decode_rate = Rate(BestSeconds(repeat, [&] {
    return pool.ParallelFor(keys.size(), [&](size_t i) {
      return m1->codec_chain->Decode(spec, encoded[i], decoded[i].data());
    });
  }));
  std::vector<Bytes> reencoded(keys.size());
  const double compress_rate = Rate(BestSeconds(repeat, [&] {
    return pool.ParallelFor(keys.size(), [&](size_t i) {
      return m1->codec_chain->Encode(spec, decoded[i].data(), &reencoded[i]);
    });
  }));
  // 1 -> all threads scaling of the engine's full read of R1.
  ThreadPool single(0);
  const double one_thread =
      Rate(BestSeconds(1, [&] { return r1->Read({}, check.data(), kTotal, {.pool = &single}); }));
  const double all_threads = Rate(
      BestSeconds(repeat, [&] { return r1->Read({}, check.data(), kTotal, {.pool = &pool}); }));

  // GPU limits: pinned host-to-device and device-to-device copies.
  uint8_t *dev = nullptr, *dev2 = nullptr;
  MustCuda(cudaMalloc(&dev, kTotal), "cudaMalloc");
  MustCuda(cudaMalloc(&dev2, kTotal), "cudaMalloc");
  const auto [h2d, d2d] = MeasureCopyLimits(host, dev, dev2, kTotal, repeat);

  std::vector<Row> rows;
  bool all_equal = true;
  auto note_equal = [&](bool equal, const char* what) {
    if (!equal) std::fprintf(stderr, "suite: %s: VALUES DIFFER from the engine's read\n", what);
    all_equal &= equal;
  };
  {
    // Server peak memory during a full host read of R1 on a fresh zarrd, through the bytes
    // transport and through Client::Get's default (shared-memory bands); the row takes the
    // larger. The server's peak counts the client's regions it mapped and wrote.
    double above_idle_mib = 0;
    for (bool shared : {false, true}) {
      BenchServer fresh(zarrd, SuiteConfig(dir));
      fresh.client().set_use_shared_memory(shared);
      const uint64_t idle_kib = ProcStatusKiB(fresh.pid(), "VmRSS:");
      Must(fresh.client().Get("bench", "r1", {}, check.data(), kTotal), "host read");
      const uint64_t peak_kib = ProcStatusKiB(fresh.pid(), "VmHWM:");
      std::printf("server memory: idle %.0f MiB, peak during a full %s read of R1 %.0f MiB\n",
                  idle_kib / 1024.0, shared ? "shared-memory" : "bytes", peak_kib / 1024.0);
      above_idle_mib = std::max(above_idle_mib, (peak_kib - idle_kib) / 1024.0);
    }
    rows.push_back({"server peak memory above idle, full host read of R1",
                    Fmt("%.0f MiB", above_idle_mib), "", "256 MiB",
                    above_idle_mib <= 256 ? "met" : "NOT met"});
  }

  // Full reads of R1 into a shared-memory region of a fresh zarrd, printed one by one (the first
  // reads also make the buffers of whichever path they take: GPU decoding for a whole R1 under
  // auto, unless gpu_decode_prewarm made them at start); returns the best.
  auto fresh_shm_reads = [&](client::Client& fc, client::HostRegion& region, const char* what) {
    double best = 1e30;
    std::printf("%s: full shared-memory reads of R1, one by one:", what);
    for (int r = 0; r < repeat; ++r) {
      const double t0 = NowSeconds();
      Must(fc.GetInto("bench", "r1", pb::Selection(), region, 0, kTotal), "shm read");
      const double seconds = NowSeconds() - t0;
      std::printf(" %.3f", seconds);
      best = std::min(best, seconds);
    }
    std::printf(" s\n");
    note_equal(same_as_host(region.data()), what);
    return best;
  };
  {
    nlohmann::json config = SuiteConfig(dir);
    config["gpu_decode_prewarm"] = true;
    config["log_level"] = "info";  // its start lines say how long the prewarm took
    BenchServer prewarmed(zarrd, config);
    auto region = Must(prewarmed.client().CreateHostRegion(kTotal), "host region");
    fresh_shm_reads(prewarmed.client(), *region, "zarrd with gpu_decode_prewarm");
  }

  BenchServer server(zarrd, SuiteConfig(dir));
  auto& c = server.client();
  client::DeviceClient devices(c);

  // Full read of R1 to the host: shared memory, and bytes (Client::Get: its default banded
  // streams).
  auto region = Must(c.CreateHostRegion(kTotal), "host region");
  const double shm = Rate(fresh_shm_reads(c, *region, "zarrd"));
  std::memset(check.data(), 0, kTotal);
  c.set_use_shared_memory(false);  // the bytes transport (1 GiB would stream anyway)
  const double bytes = Rate(BestSeconds(
      repeat, [&] { return c.Get("bench", "r1", pb::Selection(), check.data(), kTotal); }));
  note_equal(same_as_host(check.data()), "bytes read");
  c.set_use_shared_memory(true);
  // Client::Get's default over the Unix socket: bands through shared-memory scratch regions.
  std::memset(check.data(), 0, kTotal);
  const double default_get = Rate(BestSeconds(
      repeat, [&] { return c.Get("bench", "r1", pb::Selection(), check.data(), kTotal); }));
  note_equal(same_as_host(check.data()), "default read");
  std::printf("Client::Get of R1 by default (shared-memory bands): %.2f GB/s\n", default_get);
  // The bare gRPC byte stream from the same server, as the client reads pieces (best of 1/2/4
  // streams, all on the client's connection or, as Client::Get's bands, each on its own): 1 GiB of
  // distinct memory sent as zarrd sends decoded bands (the limit), and one piece sent again and
  // again (hot in the caches; printed beside it).
  std::vector<std::unique_ptr<client::Client>> own_connections;
  for (int t = 1; t < 4; ++t) {
    own_connections.push_back(Must(
        client::Client::Connect(server.address(), 20, {}, {{"grpc.use_local_subchannel_pool", 1}}),
        "connect"));
  }
  auto bare_stream = [&](bool distinct, bool separate) {
    double best = 0;
    for (int streams : {1, 2, 4}) {
      best = std::max(best, Rate(BestSeconds(repeat, [&] {
                        std::vector<std::thread> threads;
                        std::vector<Status> status(streams);
                        const size_t part = kTotal / streams;
                        for (int t = 0; t < streams; ++t) {
                          threads.emplace_back([&, t] {
                            grpc::ClientContext ctx;
                            pb::StreamBytesRequest req;
                            req.set_nbytes(part);
                            req.set_piece_bytes(1 << 20);
                            req.set_distinct(distinct);
                            auto* channel =
                                separate && t > 0 ? own_connections[t - 1]->channel() : c.channel();
                            auto got = client::ReadPieces(channel, "/zarrd.v1.Zarrd/StreamBytes",
                                                          req, &ctx, check.data() + t * part, part);
                            status[t] = got.ok() ? OkStatus() : got.status();
                          });
                        }
                        for (auto& th : threads) th.join();
                        for (auto& s : status) ZARRD_RETURN_IF_ERROR(s);
                        return OkStatus();
                      })));
    }
    return best;
  };
  const double bare = bare_stream(true, false);
  const double bare_hot = bare_stream(false, false);
  const double bare_connections = bare_stream(true, true);
  own_connections.clear();
  const double ts_read = peer("r1_host_read_s") > 0 ? Rate(peer("r1_host_read_s")) : 0;
  auto x = Ratio;
  rows.push_back(
      {"full read R1 to host, shared memory", Fmt("%.2f GB/s", shm), Fmt("%.2f GB/s", ts_read),
       Fmt("%.2f GB/s decode", decode_rate),
       x(shm, decode_rate) + " of limit (>= 0.90), " + x(shm, ts_read) + "x peer (>= 1.5)"});
  rows.push_back({"full read R1 to host, bytes transport", Fmt("%.2f GB/s", bytes),
                  Fmt("%.2f GB/s", ts_read), Fmt("%.2f GB/s bare stream, one connection", bare),
                  x(bytes, bare) + " of limit (>= 0.85); " + x(bytes, bare_hot) + " of " +
                      Fmt("%.2f GB/s", bare_hot) + " sending one cached piece; " +
                      x(bytes, std::min(decode_rate, bare_connections)) + " of min(decode, " +
                      Fmt("%.2f GB/s", bare_connections) + " bare on a connection per stream)"});

  // Full reads to the GPU (DEVICE results through CUDA IPC), R1, R2, R3.
  auto device_read = [&](const char* st, const char* path, const char* what) {
    std::vector<double> times;
    for (int r = 0; r < repeat + 1; ++r) {  // the first maps the slab: warm-up
      const double t0 = NowSeconds();
      auto a = Must(devices.Get(st, path, {}), what);
      times.push_back(NowSeconds() - t0);
      if (r == repeat) {
        MustCuda(cudaMemcpy(check.data(), a->data(), kTotal, cudaMemcpyDeviceToHost), "d2h");
      }
    }
    note_equal(same_as_host(check.data()), what);
    return Rate(*std::min_element(times.begin() + 1, times.end()));
  };
  const double gpu_r1 = device_read("bench", "r1", "R1 to GPU");
  const double gpu_r2 = device_read("bench", "r2", "R2 to GPU");
  const double gpu_r3 = device_read("bench", "r3", "R3 to GPU");
  auto peer_rate = [&](const char* key) { return peer(key) > 0 ? Rate(peer(key)) : 0.0; };
  const double r1_limit = std::min(decode_rate, h2d);
  rows.push_back({"full read R1 to GPU", Fmt("%.2f GB/s", gpu_r1),
                  Fmt("%.2f GB/s", peer_rate("r1_gpu_s")),
                  Fmt("%.2f GB/s min(decode, H2D)", r1_limit),
                  x(gpu_r1, r1_limit) + " of limit (>= 0.90), " + x(gpu_r1, peer_rate("r1_gpu_s")) +
                      "x peer (>= 2.2)"});
  rows.push_back({"full read R2 to GPU", Fmt("%.2f GB/s", gpu_r2),
                  Fmt("%.2f GB/s", peer_rate("r2_gpu_s")), Fmt("%.2f GB/s pinned H2D", h2d),
                  x(gpu_r2, h2d) + " of limit (>= 0.70)"});
  rows.push_back({"full read R3 (sharded) to GPU", Fmt("%.2f GB/s", gpu_r3),
                  Fmt("%.2f GB/s", peer_rate("r3_gpu_s")), Fmt("%.2f GB/s decode", decode_rate),
                  x(gpu_r3, decode_rate) + " of limit"});

  // One 512 x 512 chunk of R1 at random (1 MiB: Client::Get decodes it into the client's scratch
  // shared memory), and an empty call.
  // The limit is measured in the same loop, so both see the machine in the same state (its
  // single-thread speed wanders by half between runs): the same chunk's decode on this thread
  // from memory, and an empty call.
  std::map<std::string, size_t> key_index;
  for (size_t k = 0; k < keys.size(); ++k) key_index[keys[k]] = k;
  std::vector<double> chunk_us, empty_us, decode_us;
  std::mt19937 rng(1);
  std::vector<uint8_t> one(kChunk * kChunk * 4);
  for (int i = 0; i < 600; ++i) {
    const int64_t r = (rng() % 32) * kChunk, col = (rng() % 32) * kChunk;
    const size_t k =
        key_index.at("r1/c/" + std::to_string(r / kChunk) + "/" + std::to_string(col / kChunk));
    pb::Selection sel;
    for (int64_t lo : {r, col}) {
      auto* s = sel.add_items()->mutable_slice();
      s->set_start(lo);
      s->set_stop(lo + kChunk);
    }
    const double t0 = NowSeconds();
    Must(c.Get("bench", "r1", sel, one.data(), one.size()), "chunk read");
    const double t1 = NowSeconds();
    grpc::ClientContext ctx;
    pb::ServerInfoResponse info;
    Must(wire::FromGrpcStatus(c.stub().ServerInfo(&ctx, pb::ServerInfoRequest(), &info)), "empty");
    const double t2 = NowSeconds();
    Must(m1->codec_chain->Decode(spec, encoded[k], decoded[k].data()), "decode");
    const double t3 = NowSeconds();
    if (i >= 100) {
      chunk_us.push_back((t1 - t0) * 1e6);
      empty_us.push_back((t2 - t1) * 1e6);
      decode_us.push_back((t3 - t2) * 1e6);
    }
  }
  const auto [c50, c99] = Percentiles(chunk_us);
  const auto [e50, e99] = Percentiles(empty_us);
  const double one_decode_us = Percentiles(decode_us).first;
  const double chunk_limit = one_decode_us + e50;
  rows.push_back({"one 512 x 512 chunk of R1, p50 / p99", Fmt("%.0f", c50) + Fmt(" / %.0f us", c99),
                  Fmt("%.0f", peer("chunk_p50_us")) + Fmt(" / %.0f us", peer("chunk_p99_us")),
                  Fmt("%.0f us decode + empty call", chunk_limit),
                  x(c50, chunk_limit) + " of limit (<= 1.3), p99/p50 " + x(c99, c50) + " (<= 2)"});

  // Full writes of R1: from the host (shared memory) and from the GPU (a registered region).
  Must(c.CreateArray("bench", "w_host", ToV3Json(*m1), nullptr, true).status(), "create");
  Must(c.CreateArray("bench", "w_gpu", ToV3Json(*m1), nullptr, true).status(), "create");
  std::memcpy(region->data(), host, kTotal);
  const double write_host = Rate(BestSeconds(
      repeat, [&] { return c.SetFrom("bench", "w_host", pb::Selection(), *region, 0, kTotal); }));
  MustCuda(cudaMemcpy(dev, host, kTotal, cudaMemcpyHostToDevice), "h2d");
  auto dregion = Must(devices.RegisterRegion(dev, kTotal), "device region");
  const double write_gpu = Rate(BestSeconds(repeat, [&] {
    return devices.SetFrom("bench", "w_gpu", pb::Selection(), *dregion, 0, kTotal);
  }));
  ::sync();  // the writes' writeback must not run under the measurements that follow
  for (const char* path : {"w_host", "w_gpu"}) {
    auto written = Must(Array::Open(store, path), "reopen");
    Must(written->Read({}, check.data(), kTotal, {.pool = &pool}), "read back");
    note_equal(same_as_host(check.data()), path);
  }
  rows.push_back({"full write R1 from host", Fmt("%.2f GB/s", write_host),
                  Fmt("%.2f GB/s", peer_rate("r1_host_write_s")),
                  Fmt("%.2f GB/s compress", compress_rate),
                  x(write_host, compress_rate) + " of limit (>= 0.85), " +
                      x(write_host, peer_rate("r1_host_write_s")) + "x peer (>= 1.3)"});
  rows.push_back({"full write from GPU (device input)", Fmt("%.2f GB/s", write_gpu),
                  Fmt("%.2f GB/s", peer_rate("gpu_write_s")),
                  Fmt("%.2f GB/s compress", compress_rate),
                  x(write_gpu, compress_rate) + " of limit"});

  // The GPU memory store: R2's values stored raw in zarrd's device memory, read device to device.
  Must(c.CreateArray("gmem", "r2", ToV3Json(*r2->metadata()), nullptr, true).status(), "gmem");
  Must(c.SetFrom("gmem", "r2", pb::Selection(), *region, 0, kTotal), "gmem write");
  const double gmem = device_read("gmem", "r2", "GPU store read");
  rows.push_back({"GPU memory store read, R2", Fmt("%.0f GB/s", gmem), "",
                  Fmt("%.0f GB/s device-to-device copy", d2d),
                  x(gmem, d2d) + " of limit (>= 0.50)"});
  for (Row& row : GpuDecodeRows({.zarrd = zarrd,
                  .dir = dir,
                  .store = store,
                  .pool = &pool,
                  .values = host,
                  .nbytes = kTotal,
                  .h2d_gbps = h2d,
                  .d2d_gbps = d2d,
                  .repeat = repeat,
                  .peers = &peers,
                  .note_equal = note_equal})) {
    rows.push_back(std::move(row));
  }
  rows.push_back(
      {"1 -> " + std::to_string(hw) + " threads scaling, engine full read of R1",
       Fmt("%.1fx", all_threads / one_thread), "", std::to_string(hw),
       Fmt("%.2f GB/s on 1 thread, ", one_thread) + Fmt("%.2f GB/s on all (>= 12x)", all_threads)});
  dregion.reset();
  region.reset();

  cudaDeviceProp prop;
  MustCuda(cudaGetDeviceProperties(&prop, 0), "device");
  std::printf(
      "\n%s, %zu cores; empty gRPC call p50/p99 %.0f / %.0f us; one chunk's decode on one "
      "thread p50 %.0f us\n\n",
      prop.name, hw, e50, e99, one_decode_us);
  std::printf(
      "| work | zarrd | peer (tensorstore) | limit | ratios (target) |\n|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %s | %s | %s |\n", r.work.c_str(), r.zarrd.c_str(),
                r.peer.empty() ? "—" : r.peer.c_str(), r.limit.c_str(), r.ratios.c_str());
  }
  std::printf("\nvalues: %s\n", all_equal ? "every zarrd read and write equals the engine's read"
                                          : "SOME DIFFER (see above)");
  return all_equal ? 0 : 1;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
