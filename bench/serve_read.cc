// serve_read: the 1 GiB reference array read from another process through zarrd, beside the
// engine's in-process rate and a bare gRPC byte stream of the same size on the same socket.
//
//   serve_read [--dir DIR] [--zarrd PATH] [--piece BYTES] [--repeat R] [--stream-threads N]
//              [--setting K] [--streams N]
//
// Starts its own zarrd (fork + exec) on a Unix socket serving DIR. Prints, per transport, GB/s
// and the ratio to its target, and p50/p99 of a 4 KiB uncompressed read beside an empty call.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench/bench_server.h"
#include "bench/bench_util.h"
#include "bench/reference_array.h"
#include "client/client.h"
#include "client/piece_reader.h"

namespace zarrd::bench {
namespace {

namespace pb = ::zarrd::v1;

struct Args {
  std::string dir = "zarrd-bench-data";
  std::string zarrd;
  uint32_t piece = 1 << 20;
  int repeat = 3;
  int stream_threads = 0;
  int setting = -1;  // -1: every client setting
  int streams = 0;   // 0: 1, 2, 4 and 8
};

pb::Selection Rows(int64_t start, int64_t stop) {
  pb::Selection sel;
  auto* s = sel.add_items()->mutable_slice();
  s->set_start(start);
  s->set_stop(stop);
  return sel;
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
    if (k == "--setting") args.setting = std::stoi(argv[i + 1]);
    if (k == "--streams") args.streams = std::stoi(argv[i + 1]);
  }
  if (args.zarrd.empty()) args.zarrd = FindZarrd();
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(hw - 1);
  StoreHandle store(*OpenLocalStore(args.dir));
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

  BenchServer server(
      args.zarrd,
      {{"stores", {{{"name", "bench"}, {"root", std::filesystem::absolute(args.dir).string()}}}},
       {"stream_piece_bytes", args.piece},
       {"stream_decode_threads", args.stream_threads},
       {"enable_stream_bytes", true},  // the bare-transport rows
       {"stream_bytes_max_bytes", uint64_t{1} << 32}});
  const std::string& address = server.address();
  const pid_t pid = server.pid();
  // Four client settings: gRPC's defaults (16 KiB frames, a window that BDP probing grows) and
  // the client's own (4 MiB frames, 64 MiB window), each with every stream on one connection
  // (channels with equal arguments share one) and with a connection per stream. The client
  // receives, so its settings bound the server's frames and flow control.
  const std::pair<std::string, int> own_connection{"grpc.use_local_subchannel_pool", 1};
  const std::vector<std::pair<const char*, std::vector<std::pair<std::string, int>>>> settings = {
      {"gRPC default frames and window, one connection",
       {{"grpc.http2.max_frame_size", 16384}, {"grpc.http2.lookahead_bytes", 65535}}},
      {"gRPC default frames and window, a connection per stream",
       {{"grpc.http2.max_frame_size", 16384},
        {"grpc.http2.lookahead_bytes", 65535},
        own_connection}},
      {"4 MiB frames, 64 MiB window (the client's default), one connection", {}},
      {"4 MiB frames, 64 MiB window, a connection per stream", {own_connection}}};
  std::vector<std::vector<std::unique_ptr<client::Client>>> client_sets;
  size_t default_streams = 0;
  for (const auto& setting : settings) {
    auto& set = client_sets.emplace_back();
    for (int i = 0; i < 8; ++i) {
      auto c = client::Client::Connect(address, 20, {}, setting.second);
      if (!c.ok()) {
        std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
        return 1;
      }
      default_streams = (*c)->read_streams();
      (*c)->set_read_streams(1);           // the bench bands itself, stream count by stream count
      (*c)->set_use_shared_memory(false);  // bytes transport rows
      set.push_back(std::move(*c));
    }
  }
  auto& clients = client_sets[2];  // the client's defaults

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
  // CPU seconds of this process and of zarrd, per GiB moved, over the best-of-N repeats.
  auto cpu_seconds = [&] {
    auto read = [](const std::string& path) {
      std::ifstream f(path);
      std::string text((std::istreambuf_iterator<char>(f)), {});
      std::istringstream in(text.substr(text.rfind(')') + 2));
      std::string field;
      double ticks = 0;
      for (int i = 3; i <= 15 && in >> field; ++i) {
        if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
      }
      return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
    };
    return std::pair<double, double>{read("/proc/self/stat"),
                                     read("/proc/" + std::to_string(pid) + "/stat")};
  };
  struct Best {
    double rate = 0;
    std::string how;
    double client_cpu = 0, server_cpu = 0;  // seconds per GiB
  };
  auto measure = [&](Best* best, const std::string& how, const std::function<Status()>& f) {
    const auto [c0, s0] = cpu_seconds();
    const double rate = total / BestSeconds(args.repeat, f) / 1e9;
    const auto [c1, s1] = cpu_seconds();
    const double gib = static_cast<double>(total) * args.repeat / (1u << 30);
    if (rate > best->rate) *best = {rate, how, (c1 - c0) / gib, (s1 - s0) / gib};
    return rate;
  };
  std::printf(
      "serve_read: 16384 x 16384 float32 (1 GiB), 512 x 512 chunks, bytes+zstd(3); "
      "zarrd on %s, %zu cores, pieces of %u bytes, stream decode threads %d (0: cores/2)\n",
      address.c_str(), hw, args.piece, args.stream_threads);
  std::printf("engine in-process full read:        %6.2f GB/s\n", engine);
  Best bare_best, hot_best, bytes_best;
  for (size_t k = 0; k < settings.size(); ++k) {
    if (args.setting >= 0 && k != static_cast<size_t>(args.setting)) continue;
    auto& set = client_sets[k];
    std::printf("-- client %s\n", settings[k].first);
    for (int streams : {1, 2, 4, 8}) {
      if (args.streams > 0 && streams != args.streams) continue;
      {
        const uint32_t piece = 1u << 20;  // zarrd's default stream_piece_bytes
        const std::string how = std::to_string(streams) + " streams, " +
                                std::to_string(piece >> 20) + " MiB pieces, " + settings[k].first;
        // Distinct: a stream-sized buffer sent as decoded bands are (the limit); hot: one piece
        // sent again and again.
        double rates[2];
        for (bool distinct : {true, false}) {
          rates[distinct] = measure(distinct ? &bare_best : &hot_best, how, [&] {
            return parallel(streams, [&](int t, int64_t a, int64_t b) -> Status {
              grpc::ClientContext ctx;
              pb::StreamBytesRequest req;
              const size_t n = static_cast<size_t>(b - a) * 16384 * 4;
              req.set_nbytes(n);
              req.set_piece_bytes(piece);
              req.set_distinct(distinct);
              auto got = client::ReadPieces(set[t]->channel(), "/zarrd.v1.Zarrd/StreamBytes", req,
                                            &ctx, out.data() + a * 16384 * 4, n);
              return got.ok() ? OkStatus() : got.status();
            });
          });
        }
        std::printf(
            "%d stream(s): bare gRPC byte stream, %2u MiB pieces: %6.2f GB/s (one cached piece "
            "%.2f)\n",
            streams, piece >> 20, rates[1], rates[0]);
      }
      const std::string how = std::to_string(streams) + " streams, " + settings[k].first;
      const double bytes = measure(&bytes_best, how, [&] {
        return parallel(streams, [&](int t, int64_t a, int64_t b) {
          return set[t]->Get("bench", "r1", Rows(a, b), out.data() + a * 16384 * 4,
                             static_cast<size_t>(b - a) * 16384 * 4);
        });
      });
      std::printf("%d stream(s): zarrd bytes transport:              %6.2f GB/s\n", streams, bytes);
    }
  }
  // What a caller of Client::Get gets without banding anything itself.
  clients[0]->set_read_streams(default_streams);
  Best plain;
  const double get_default = measure(&plain, "Client::Get", [&] {
    return clients[0]->Get("bench", "r1", pb::Selection(), out.data(), total);
  });
  clients[0]->set_read_streams(4);
  const double get_four = measure(&plain, "Client::Get, 4 streams", [&] {
    return clients[0]->Get("bench", "r1", pb::Selection(), out.data(), total);
  });
  clients[0]->set_read_streams(1);
  auto region = clients[0]->CreateHostRegion(total);
  if (!region.ok()) {
    std::fprintf(stderr, "%s\n", region.status().ToString().c_str());
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
  client_sets.clear();
  const int wstatus = server.Stop();

  const double limit = std::min(engine, bare_best.rate);
  std::printf(
      "best bare gRPC byte stream:         %6.2f GB/s (%s); CPU s/GiB client %.2f, server %.2f\n",
      bare_best.rate, bare_best.how.c_str(), bare_best.client_cpu, bare_best.server_cpu);
  std::printf(
      "  sending one cached piece instead:  %6.2f GB/s (%s); CPU s/GiB client %.2f, server %.2f\n",
      hot_best.rate, hot_best.how.c_str(), hot_best.client_cpu, hot_best.server_cpu);
  std::printf(
      "zarrd bytes transport:              %6.2f GB/s (%s) = %5.1f %% of "
      "min(engine, bare) (target >= 85 %%), %5.1f %% of the cached piece's; CPU s/GiB client "
      "%.2f, server %.2f\n",
      bytes_best.rate, bytes_best.how.c_str(), 100 * bytes_best.rate / limit,
      100 * bytes_best.rate / std::min(engine, hot_best.rate), bytes_best.client_cpu,
      bytes_best.server_cpu);
  std::printf(
      "Client::Get of the whole array (%zu banded streams by default): %6.2f GB/s; with 4 "
      "streams %6.2f GB/s\n",
      default_streams, get_default, get_four);
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
