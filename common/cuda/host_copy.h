// Device memory copied into pageable host memory (a protobuf message, a client's shared-memory
// region) through the staging pool's pinned buffers: the bytes go in parts, each copied down
// into a slot's pinned buffer and from there into place by a thread of the pool, so the copies
// down overlap the host copies of the parts before them. One cudaMemcpy into pageable memory
// moved R1's decoded GiB at a third of a pinned copy's rate on an H100 (bench/RESULTS.md,
// session 18).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/cuda/staging.h"
#include "common/util/bytes.h"
#include "common/util/status.h"
#include "common/util/thread_pool.h"

namespace zarrd::cuda {

// Bytes a part: large enough that a part's copy down runs near the link's rate, small enough
// that the parts of a large result keep every thread of the pool busy.
constexpr size_t kHostCopyPartBytes = size_t{4} << 20;

// Copies out.size() bytes from `src` (device memory of the staging pool's device) into `out`.
Status CopyToHost(StagingPool& staging, const uint8_t* src, MutableByteView out, ThreadPool& pool,
                  const std::atomic<bool>* cancelled = nullptr);

}  // namespace zarrd::cuda
