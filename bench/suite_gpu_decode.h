// The suite's rows of GPU decoding (issue 20's table): R1 (zstd 3), R4 (v2 blosc lz4 5 +
// shuffle) and R5 (v3 gzip 5), all of R1's values written by tensorstore, read to the GPU by a
// zarrd decoding on the GPU and on its CPUs; R1 held compressed in the GPU store; the zstd
// kernel alone on R1's chunks; the server's CPU time per GiB; one chunk's latency.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/suite_table.h"
#include "common/kvstore/store_handle.h"
#include "common/util/thread_pool.h"

namespace zarrd::bench {

struct GpuDecodeSuite {
  std::string zarrd;  // the server binary
  std::string dir;    // the reference arrays
  StoreHandle store;
  ThreadPool* pool = nullptr;
  const uint8_t* values = nullptr;  // R1's values (pinned), which R4 and R5 hold too
  size_t nbytes = 0;
  double h2d_gbps = 0, d2d_gbps = 0;
  int repeat = 3;
  const nlohmann::json* peers = nullptr;  // bench/peers.py's figures
  // Reports whether a read's values equal `values`.
  std::function<void(bool equal, const char* what)> note_equal;
};

std::vector<Row> GpuDecodeRows(const GpuDecodeSuite& suite);

}  // namespace zarrd::bench
