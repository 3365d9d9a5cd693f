// serve_read: the 1 GiB reference array read from another process through zarrd, beside the
// engine's in-process rate and a bare gRPC byte stream of the same size on the same socket.
//
//   serve_read [--dir DIR] [--zarrd PATH] [--piece BYTES] [--repeat R] [--stream-threads N]
//
// Starts its own zarrd (fork + exec) on a Unix socket serving DIR. Prints, per transport, GB/s
// and the ratio to its target, and p50/p99 of a 4 KiB uncompressed read beside an empty call.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/reference_array.h"
#include "client/client.h"

extern char** environ;

namespace zarrd::bench {
namespace {

namespace pb = ::zarrd::v1;

struct Args {
  std::string dir = "zarrd-bench-data";
  std::string zarrd;
  uint32_t piece = 4 << 20;
  int repeat = 3;
  int stream_threads = 0;
};

pb::Selection Rows(int64_t start, int64_t stop) {
  pb::Selection sel;
  auto* s = sel.add_items()->mutable_slice();
  s->set_start(start);
  s->set_stop(stop);
  return sel;
}

std::pair<double, double> Percentiles(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

int Main(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--dir") args.dir = argv[i + 1];
    if (k == "--zarrd") args.zarrd = argv[i + 1];
    if (k == "--piece") args.piece = static_cast<uint32_t>(std::stoul(argv[i + 1]));
    if (k == "--repeat") args.repeat = std::stoi(argv[i + 1]);
    if (k == "--stream-threads") args.stream_threads = std::stoi(argv[i + 1]);
  }
  if (args.zarrd.empty()) {
    auto self = std::filesystem::canonical("/proc/self/exe").parent_path();
    for (auto candidate : {self / "zarrd", self / ".." / "server" / "zarrd"}) {
      if (std::filesystem::exists(candidate)) args.zarrd = candidate.string();
    }
  }
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(hw - 1);
  auto store = *OpenLocalStore(args.dir);
  auto array = OpenOrWriteReference(store, "r1", {}, pool);
  if (!array.ok()) {
    std::fprintf(stderr, "%s\n", array.status().ToString().c_str());
    return 1;
  }
  const size_t total = size_t{16384} * 16384 * 4;
  std::vector<uint8_t> out(total);
  std::memset(out.data(), 0, out.size());
  const double engine =
      total /
      BestSeconds(args.repeat,
                  [&] { return (*array)->Read({}, out.data(), total, {.pool = &pool}); }) /
      1e9;

  // A small uncompressed array whose 32 x 32 float32 chunks are 4 KiB.
  {
    ArrayMetadata m;
    m.shape = {1024, 1024};
    m.chunk_shape = {32, 32};
    m.dtype = DataType::kFloat32;
    m.fill_value = FillValue(4, 0);
    m.codecs = nlohmann::json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])");
    auto small = Array::Create(store, "small", m, true);
    std::vector<float> v(1024 * 1024, 1.5f);
    if (!small.ok() || !(*small)->Write({}, v.data(), v.size() * 4).ok()) return 1;
  }

  const std::string socket = "/tmp/zarrd-bench-" + std::to_string(::getpid()) + ".sock";
  const std::string config = "/tmp/zarrd-bench-" + std::to_string(::getpid()) + ".json";
  std::ofstream(config) << nlohmann::json{
      {"stores", {{{"name", "bench"}, {"root", std::filesystem::absolute(args.dir).string()}}}},
      {"listen", {"unix:" + socket}},
      {"metrics_listen", ""},
      {"stream_piece_bytes", args.piece},
      {"stream_decode_threads", args.stream_threads},
      {"log_level", "warn"}}.dump();
  pid_t pid;
  const char* zargv[] = {args.zarrd.c_str(), "--config", config.c_str(), nullptr};
  if (posix_spawn(&pid, args.zarrd.c_str(), nullptr, nullptr, const_cast<char**>(zargv), environ) !=
      0) {
    std::fprintf(stderr, "cannot start %s\n", args.zarrd.c_str());
    return 1;
  }
  const std::string address = "unix:" + socket;
  std::vector<std::unique_ptr<client::Client>> clients;
  for (int i = 0; i < 8; ++i) {
    auto c = client::Client::Connect(address, 20);
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
      ::kill(pid, SIGTERM);
      return 1;
    }
    clients.push_back(std::move(*c));
  }

  auto parallel = [&](int streams, const std::function<Status(int, int64_t, int64_t)>& f) {
    std::vector<std::thread> threads;
    std::vector<Status> status(streams);
    const int64_t rows = 16384 / streams;
    for (int t = 0; t < streams; ++t) {
      threads.emplace_back([&, t] { status[t] = f(t, t * rows, (t + 1) * rows); });
    }
    for (auto& th : threads) th.join();
    for (auto& s : status) {
      if (!s.ok()) return s;
    }
    return OkStatus();
  };
  std::printf(
      "serve_read: 16384 x 16384 float32 (1 GiB), 512 x 512 chunks, bytes+zstd(3); "
      "zarrd on %s, %zu cores, pieces of %u bytes, stream decode threads %d (0: cores/4)\n",
      address.c_str(), hw, args.piece, args.stream_threads);
  std::printf("engine in-process full read:        %6.2f GB/s\n", engine);
  double bare_best = 0, bytes_best = 0;
  int bare_streams = 0, bytes_streams = 0;
  auto bare_rate = [&](int streams, uint32_t piece) {
    return total /
           BestSeconds(args.repeat,
                       [&] {
                         return parallel(streams, [&](int t, int64_t a, int64_t b) -> Status {
                           grpc::ClientContext ctx;
                           pb::StreamBytesRequest req;
                           req.set_nbytes(static_cast<uint64_t>(b - a) * 16384 * 4);
                           req.set_piece_bytes(piece);
                           auto reader = clients[t]->stub().StreamBytes(&ctx, req);
                           pb::GetItemResponse msg;
                           while (reader->Read(&msg)) {
                             std::memcpy(out.data() + a * 16384 * 4 + msg.offset(),
                                         msg.data().data(), msg.data().size());
                           }
                           return client::FromGrpc(reader->Finish());
                         });
                       }) /
           1e9;
  };
  for (int streams : {1, 2, 4, 8}) {
    for (uint32_t piece : {args.piece, 32u << 20}) {
      const double bare = bare_rate(streams, piece);
      std::printf("%d stream(s): bare gRPC byte stream, %2u MiB pieces: %6.2f GB/s\n", streams,
                  piece >> 20, bare);
      if (bare > bare_best) bare_best = bare, bare_streams = streams;
    }
    const double bytes = total /
                         BestSeconds(args.repeat,
                                     [&] {
                                       return parallel(streams, [&](int t, int64_t a, int64_t b) {
                                         return clients[t]->Get(
                                             "bench", "r1", Rows(a, b), out.data() + a * 16384 * 4,
                                             static_cast<size_t>(b - a) * 16384 * 4);
                                       });
                                     }) /
                         1e9;
    std::printf("%d stream(s): zarrd bytes transport:              %6.2f GB/s\n", streams, bytes);
    if (bytes > bytes_best) bytes_best = bytes, bytes_streams = streams;
  }
  auto region = clients[0]->CreateHostRegion(total);
  if (!region.ok()) {
    std::fprintf(stderr, "%s\n", region.status().ToString().c_str());
    ::kill(pid, SIGTERM);
    return 1;
  }
  std::memset((*region)->data(), 0, total);
  const double shm =
      total /
      BestSeconds(
          args.repeat,
          [&] { return clients[0]->GetInto("bench", "r1", pb::Selection(), **region, 0, total); }) /
      1e9;
  const bool same = std::memcmp((*region)->data(), out.data(), total) == 0;

  std::vector<double> chunk_us, empty_us;
  std::vector<uint8_t> small(4096);
  for (int i = 0; i < 3000; ++i) {
    pb::Selection sel;
    const int64_t r = (i * 7 % 32) * 32, c = (i * 13 % 32) * 32;
    auto* s0 = sel.add_items()->mutable_slice();
    s0->set_start(r);
    s0->set_stop(r + 32);
    auto* s1 = sel.add_items()->mutable_slice();
    s1->set_start(c);
    s1->set_stop(c + 32);
    double t0 = NowSeconds();
    if (!clients[0]->Get("bench", "small", sel, small.data(), small.size()).ok()) return 1;
    double t1 = NowSeconds();
    grpc::ClientContext ctx;
    pb::ServerInfoResponse info;
    if (!clients[0]->stub().ServerInfo(&ctx, pb::ServerInfoRequest(), &info).ok()) return 1;
    double t2 = NowSeconds();
    if (i >= 200) {  // warm-up
      chunk_us.push_back((t1 - t0) * 1e6);
      empty_us.push_back((t2 - t1) * 1e6);
    }
  }
  auto [c50, c99] = Percentiles(chunk_us);
  auto [e50, e99] = Percentiles(empty_us);
  region->reset();
  clients.clear();
  ::kill(pid, SIGTERM);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  std::filesystem::remove(config);

  const double limit = std::min(engine, bare_best);
  std::printf("best bare gRPC byte stream:         %6.2f GB/s (%d streams)\n", bare_best,
              bare_streams);
  std::printf(
      "zarrd bytes transport:              %6.2f GB/s (%d streams) = %5.1f %% of "
      "min(engine, bare) (target >= 85 %%)\n",
      bytes_best, bytes_streams, 100 * bytes_best / limit);
  std::printf(
      "zarrd shared-memory transport:      %6.2f GB/s = %5.1f %% of engine (target >= 90 %%)%s\n",
      shm, 100 * shm / engine, same ? "" : "  VALUES DIFFER");
  std::printf(
      "4 KiB read p50/p99: %.0f / %.0f us; empty call p50/p99: %.0f / %.0f us; "
      "p50 ratio %.2f (target <= 2)\n",
      c50, c99, e50, e99, c50 / e50);
  std::printf("zarrd exited with %d\n", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
  return same ? 0 : 1;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
