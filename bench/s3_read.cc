// s3_read: full read of a 256 MiB float32 array (bytes + zstd(3), 512 x 512 chunks) by the engine
// from a local root and from an S3 store on s3rver (started here on 127.0.0.1), same run; and, as
// the limit of the S3 path, plain GETs of the same chunk objects on the same curl machinery
// without decoding.
//
//   s3_read [--dir DIR] [--threads N] [--repeat R]
//
// DIR (default ./zarrd-bench-data) keeps the local array between runs; s3rver's data lives in a
// temporary directory and is uploaded from it each run.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/reference_array.h"
#include "common/kvstore/object_store.h"
#include "common/testing/s3_test_server.h"

namespace zarrd::bench {
namespace {

struct Args {
  std::string dir = "zarrd-bench-data";
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
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

int Fail(const Status& s) {
  std::fprintf(stderr, "s3_read: %s\n", s.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  ThreadPool pool(args.threads - 1);  // ParallelFor also runs on the calling thread
  auto local = OpenLocalStore(args.dir);
  if (!local.ok()) return Fail(local.status());
  const std::string path = "r256";
  auto array = OpenOrWriteReference(StoreHandle(*local), path, {.extent = 8192}, pool);
  if (!array.ok()) return Fail(array.status());
  auto keys = (*local)->List(path + "/");
  if (!keys.ok()) return Fail(keys.status());

  testing::S3TestServer server;
  const std::string why = server.Start();
  if (!why.empty()) return Fail(Unavailable(why));
  auto s3 = OpenS3Store(server.Options("bench"));
  if (!s3.ok()) return Fail(s3.status());
  std::atomic<uint64_t> encoded{0};
  Status up = pool.ParallelFor(keys->size(), [&](size_t i) {
    thread_local Bytes value;
    ZARRD_ASSIGN_OR_RETURN(bool found, (*local)->Get((*keys)[i], &value));
    if (!found) return DataLoss("vanished: " + (*keys)[i]);
    encoded += value.size();
    return (*s3)->Set((*keys)[i], value);
  });
  if (!up.ok()) return Fail(up);
  auto remote = Array::Open(StoreHandle(*s3), path);
  if (!remote.ok()) return Fail(remote.status());

  const auto m = (*array)->metadata();
  const size_t total = static_cast<size_t>(m->shape[0] * m->shape[1]) * 4;
  std::printf("s3_read: %ld x %ld float32 (%.0f MiB), %zu objects, %.1f MiB encoded; %zu threads\n",
              long(m->shape[0]), long(m->shape[1]), total / 1048576.0, keys->size(),
              encoded.load() / 1048576.0, args.threads);
  std::vector<uint8_t> out(total), check(total);
  std::memset(out.data(), 0, out.size());
  std::memset(check.data(), 1, check.size());
  const HttpStats& stats = *ObjectStoreStats(**s3);

  const double local_s = BestSeconds(
      args.repeat, [&] { return (*array)->Read({}, check.data(), check.size(), {.pool = &pool}); });
  const uint64_t requests_before = stats.requests.load();
  const double s3_s = BestSeconds(
      args.repeat, [&] { return (*remote)->Read({}, out.data(), out.size(), {.pool = &pool}); });
  const uint64_t requests = (stats.requests.load() - requests_before) / args.repeat;
  if (std::memcmp(out.data(), check.data(), total) != 0) {
    return Fail(DataLoss("the S3 read differs from the local read"));
  }
  const double raw_s = BestSeconds(args.repeat, [&] {
    return pool.ParallelFor(keys->size(), [&](size_t i) {
      thread_local Bytes value;
      ZARRD_ASSIGN_OR_RETURN(bool found, (*s3)->Get((*keys)[i], &value));
      return found ? OkStatus() : DataLoss("missing " + (*keys)[i]);
    });
  });
  S3StoreOptions fresh_options = server.Options("bench");
  fresh_options.http.reuse_connections = false;
  auto fresh = OpenS3Store(fresh_options);
  if (!fresh.ok()) return Fail(fresh.status());
  const double fresh_s = BestSeconds(args.repeat, [&] {
    return pool.ParallelFor(keys->size(), [&](size_t i) {
      thread_local Bytes value;
      ZARRD_ASSIGN_OR_RETURN(bool found, (*fresh)->Get((*keys)[i], &value));
      return found ? OkStatus() : DataLoss("missing " + (*keys)[i]);
    });
  });
  std::printf("engine full read, local root:        %6.2f GB/s  (best of %d, %.3f s)\n",
              total / local_s / 1e9, args.repeat, local_s);
  std::printf(
      "engine full read, s3 store (s3rver): %6.2f GB/s  (best of %d, %.3f s), "
      "%llu requests a read, at most %llu in flight, %llu curl handles\n",
      total / s3_s / 1e9, args.repeat, s3_s, static_cast<unsigned long long>(requests),
      static_cast<unsigned long long>(stats.max_in_flight.load()),
      static_cast<unsigned long long>(stats.handles_created.load()));
  std::printf(
      "limit: GETs of the same objects, no decode: %6.2f GB/s of decoded bytes "
      "(%.0f MB/s encoded, %.3f s)\n",
      total / raw_s / 1e9, encoded.load() / raw_s / 1e6, raw_s);
  std::printf("the same GETs, a new connection each:  %6.2f GB/s of decoded bytes (%.3f s)\n",
              total / fresh_s / 1e9, fresh_s);
  std::printf("s3 / local: %.1f %%, s3 / limit: %.1f %%\n", 100.0 * local_s / s3_s,
              100.0 * raw_s / s3_s);
  return 0;
}

}  // namespace
}  // namespace zarrd::bench

int main(int argc, char** argv) { return zarrd::bench::Main(argc, argv); }
