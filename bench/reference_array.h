// The reference array of the benchmarks: 16384 x 16384 float32 (1 GiB), 512 x 512 chunks,
// bytes + zstd level 3 (R1), or a v2 array of blosc lz4 level 5 with byte shuffle (R4); values
// a smooth field plus noise rounded to 0.01.
#pragma once

#include <functional>
#include <string>

#include "common/array/array.h"

namespace zarrd::bench {

struct ReferenceOptions {
  int64_t extent = 16384;
  int64_t chunk = 512;
  int zstd_level = 3;
  bool blosc = false;  // R4's v2 blosc lz4 5 + shuffle instead of zstd
};

// Opens `path` in `store` when it already holds the reference array, else writes it (printing
// the write rate).
Result<std::shared_ptr<Array>> OpenOrWriteReference(StoreHandle store, const std::string& path,
                                                    const ReferenceOptions& options,
                                                    ThreadPool& pool);

// The reference array's value at (row, col): a smooth field plus noise, rounded to 0.01.
float ReferenceValue(int64_t row, int64_t col, int64_t extent);

// Chunk `index` (C order) of the reference array of `extent` x `extent` values in `chunk` x
// `chunk` chunks, into out[chunk * chunk].
void ReferenceChunk(int64_t index, int64_t chunk, int64_t extent, float* out);

double NowSeconds();

// The shortest of `repeat` runs of `f`, in seconds; exits the benchmark with the error when a
// run fails.
double BestSeconds(int repeat, const std::function<Status()>& f);

}  // namespace zarrd::bench
