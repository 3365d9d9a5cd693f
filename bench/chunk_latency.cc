// chunk_latency: one 512 x 512 chunk of the reference array read through zarrd, taken apart.
// Runs anywhere (no GPU): the suite's latency row, with the parts it is made of measured in the
// same loop, so each figure sees the machine in the same state.
//
//   chunk_latency [--dir DIR] [--zarrd PATH] [--extent N] [--reads N]
//
// Per random chunk, one after another: Client::Get (what the suite's row times), GetInto a
// registered region (the same without the client's copy out of its scratch region), that copy
// alone, an empty call, the engine's in-process read of the chunk on this thread (store read +
// decode), the decode alone from memory, and an empty call again, now after the server sat idle
// as long as it did before Client::Get. Prints p50/p99 of each and the row's ratio.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "bench/bench_server.h"
#include "bench/bench_util.h"
#include "bench/reference_array.h"
#include "client/client.h"

namespace zarrd::bench {
namespace {

namespace pb = ::zarrd::v1;

int Main(int argc, char** argv) {
  std::string dir = "zarrd-bench-data", zarrd;
  int64_t extent = 16384;
  int reads = 600;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--dir") dir = argv[i + 1];
    if (k == "--zarrd") zarrd = argv[i + 1];
    if (k == "--extent") extent = std::stoll(argv[i + 1]);
    if (k == "--reads") reads = std::stoi(argv[i + 1]);
  }
  if (zarrd.empty()) zarrd = FindZarrd();
  constexpr int64_t kChunk = 512;
  const int64_t grid = extent / kChunk;
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(hw - 1);
  StoreHandle store(Must(OpenLocalStore(dir), "store"));
  const std::string path = extent == 16384 ? "r1" : "r1-" + std::to_string(extent);
  auto array = Must(OpenOrWriteReference(store, path, {.extent = extent}, pool), "reference");
  auto m = array->metadata();
  const ChunkSpec spec = m->chunk_spec();

  // Every chunk's encoded bytes in memory, for the decode-alone figure.
  std::vector<Bytes> encoded(grid * grid);
  for (int64_t i = 0; i < grid * grid; ++i) {
    const std::string key =
        path + "/c/" + std::to_string(i / grid) + "/" + std::to_string(i % grid);
    Must(store->Get(key, &encoded[i]), "chunk");
  }

  BenchServer server(
      zarrd, {{"stores", {{{"name", "bench"}, {"root", std::filesystem::absolute(dir).string()}}}},
              {"log_level", std::getenv("CHUNK_LATENCY_LOG") ? "debug" : "warn"}});
  client::Client& c = server.client();
  const size_t nbytes = spec.num_bytes();
  auto region = Must(c.CreateHostRegion(nbytes), "host region");
  std::vector<uint8_t> out(nbytes), decoded(nbytes), engine(nbytes);

  std::vector<double> get_us, into_us, copy_us, empty_us, engine_us, decode_us, idle_empty_us;
  std::mt19937 rng(1);
  ThreadPool single(0);  // the engine's read on this thread alone
  const int warmup = std::min(100, reads / 6);
  for (int i = 0; i < reads + warmup; ++i) {
    const int64_t r = rng() % grid, col = rng() % grid;
    Selection one;
    pb::Selection sel;
    for (int64_t lo : {r * kChunk, col * kChunk}) {
      auto* s = sel.add_items()->mutable_slice();
      s->set_start(lo);
      s->set_stop(lo + kChunk);
      one.push_back(SelectionItem::Slice(lo, lo + kChunk));
    }
    const double t0 = NowSeconds();
    Must(c.Get("bench", path, sel, out.data(), out.size()), "Client::Get");
    const double t1 = NowSeconds();
    Must(c.GetInto("bench", path, sel, *region, 0, nbytes), "GetInto");
    const double t2 = NowSeconds();
    std::memcpy(out.data(), region->data(), nbytes);
    const double t3 = NowSeconds();
    grpc::ClientContext ctx;
    pb::ServerInfoResponse info;
    Must(wire::FromGrpcStatus(c.stub().ServerInfo(&ctx, pb::ServerInfoRequest(), &info)), "empty");
    const double t4 = NowSeconds();
    Must(array->Read(one, engine.data(), nbytes, {.pool = &single}), "engine read");
    const double t5 = NowSeconds();
    Must(m->codec_chain->Decode(spec, encoded[r * grid + col], decoded.data()), "decode");
    const double t6 = NowSeconds();
    // The server has been idle for the two in-process reads, as it was before Client::Get.
    grpc::ClientContext idle_ctx;
    Must(wire::FromGrpcStatus(c.stub().ServerInfo(&idle_ctx, pb::ServerInfoRequest(), &info)),
         "empty");
    const double t7 = NowSeconds();
    if (std::memcmp(out.data(), engine.data(), nbytes) != 0 ||
        std::memcmp(decoded.data(), engine.data(), nbytes) != 0) {
      std::fprintf(stderr, "chunk %lld/%lld: zarrd's values differ from the engine's\n",
                   static_cast<long long>(r), static_cast<long long>(col));
      return 1;
    }
    if (i < warmup) continue;
    get_us.push_back((t1 - t0) * 1e6);
    into_us.push_back((t2 - t1) * 1e6);
    copy_us.push_back((t3 - t2) * 1e6);
    empty_us.push_back((t4 - t3) * 1e6);
    engine_us.push_back((t5 - t4) * 1e6);
    decode_us.push_back((t6 - t5) * 1e6);
    idle_empty_us.push_back((t7 - t6) * 1e6);
  }
  auto row = [](const char* what, const std::vector<double>& us) {
    const auto [p50, p99] = Percentiles(us);
    std::printf("  %-52s p50 %7.0f us   p99 %7.0f us\n", what, p50, p99);
    return p50;
  };
  std::printf("chunk_latency: %zu cores, %d random %lld x %lld chunks of %s (%zu KiB decoded)\n",
              hw, reads, static_cast<long long>(kChunk), static_cast<long long>(kChunk),
              path.c_str(), nbytes >> 10);
  const double get = row("Client::Get (the suite's row)", get_us);
  const double into = row("GetInto a registered region (no copy out)", into_us);
  const double copy = row("the client's copy out of its scratch region", copy_us);
  const double empty = row("empty call (ServerInfo), right after GetInto", empty_us);
  const double idle_empty = row("empty call after the server idled ~2 reads", idle_empty_us);
  const double eng = row("engine in-process read, this thread", engine_us);
  const double dec = row("decode alone, from memory, this thread", decode_us);
  std::printf("limit (decode + empty call) %.0f us; Client::Get %.2f of it (target <= 1.3)\n",
              dec + empty, get / (dec + empty));
  std::printf("with the empty call after the same idle gap as Client::Get's: %.0f us, %.2f\n",
              dec + idle_empty, get / (dec + idle_empty));
  std::printf(
      "parts of Client::Get above the limit: store read %.0f us (engine - decode), "
      "copy out %.0f us, the rest %.0f us\n",
      eng - dec, copy, into - (eng + empty));
  region.reset();  // unregistered through the client, which Stop destroys
  return server.Stop() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
