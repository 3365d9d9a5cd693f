#include "bench/reference_array.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace zarrd::bench {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double BestSeconds(int repeat, const std::function<Status()>& f) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const double t0 = NowSeconds();
    Status s = f();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::exit(1);
    }
    best = std::min(best, NowSeconds() - t0);
  }
  return best;
}

namespace {

// A deterministic, cheap noise in [-1, 1).
float Noise(uint64_t i) {
  i ^= i >> 33;
  i *= 0xff51afd7ed558ccdull;
  i ^= i >> 33;
  i *= 0xc4ceb9fe1a85ec53ull;
  i ^= i >> 33;
  return static_cast<float>(i >> 40) / static_cast<float>(1 << 23) - 1.0f;
}

ArrayMetadata ReferenceMetadata(const ReferenceOptions& o) {
  ArrayMetadata m;
  m.format = ZarrFormat::kV3;
  m.shape = {o.extent, o.extent};
  m.chunk_shape = {o.chunk, o.chunk};
  m.dtype = DataType::kFloat32;
  m.fill_value = FillValue(4, 0);
  if (o.blosc) {
    m.format = ZarrFormat::kV2;
    m.v2_endian = Endian::kLittle;
    m.v2_compressor = nlohmann::json::parse(
        R"({"id":"blosc","cname":"lz4","clevel":5,"shuffle":1,"blocksize":0})");
    return m;
  }
  m.codecs = nlohmann::json::array(
      {{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
       {{"name", "zstd"}, {"configuration", {{"level", o.zstd_level}, {"checksum", false}}}}});
  return m;
}

}  // namespace

void ReferenceChunk(int64_t index, int64_t chunk, int64_t extent, float* out) {
  const int64_t per_row = extent / chunk;
  const int64_t r0 = index / per_row * chunk, c0 = index % per_row * chunk;
  for (int64_t r = 0; r < chunk; ++r) {
    for (int64_t c = 0; c < chunk; ++c) out[r * chunk + c] = ReferenceValue(r0 + r, c0 + c, extent);
  }
}

float ReferenceValue(int64_t row, int64_t col, int64_t extent) {
  const double y = static_cast<double>(row), x = static_cast<double>(col);
  const double v = 100.0 * std::sin(x / 700.0) * std::cos(y / 500.0) +
                   20.0 * std::sin((x + y) / 90.0) +
                   Noise(static_cast<uint64_t>(row) * extent + col);
  return static_cast<float>(std::round(v * 100.0) / 100.0);
}

Result<std::shared_ptr<Array>> OpenOrWriteReference(StoreHandle store, const std::string& path,
                                                    const ReferenceOptions& options,
                                                    ThreadPool& pool) {
  ArrayMetadata want = ReferenceMetadata(options);
  ZARRD_RETURN_IF_ERROR(want.Finalize());
  auto existing = Array::Open(store, path);
  if (existing.ok() && ToV3Json(*(*existing)->metadata()) == ToV3Json(want)) {
    // Only reuse a complete array: its last chunk is written last.
    Bytes probe;
    auto last = (*existing)->metadata()->grid_shape();
    auto found = store->Get(JoinKey(path, want.ChunkKey({last[0] - 1, last[1] - 1})), &probe);
    if (found.ok() && *found) return existing;
  }
  const int64_t n = options.extent;
  std::vector<float> values(static_cast<size_t>(n * n));
  ZARRD_RETURN_IF_ERROR(pool.ParallelFor(static_cast<size_t>(n), [&](size_t row) {
    for (int64_t col = 0; col < n; ++col) values[row * n + col] = ReferenceValue(row, col, n);
    return OkStatus();
  }));
  ZARRD_ASSIGN_OR_RETURN(auto array, Array::Create(store, path, want, /*overwrite=*/true));
  const double t0 = NowSeconds();
  ZARRD_RETURN_IF_ERROR(array->Write({}, values.data(), values.size() * 4, {.pool = &pool}));
  const double dt = NowSeconds() - t0;
  std::printf(
      "wrote the reference array: %.2f GB/s (%.2f s, engine write incl. %s)\n",
      values.size() * 4 / dt / 1e9, dt,
      options.blosc ? "blosc lz4 5" : ("zstd-" + std::to_string(options.zstd_level)).c_str());
  return array;
}

}  // namespace zarrd::bench
