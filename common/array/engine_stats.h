// Process-wide counters of the engine's work, read by the server's metrics.
#pragma once

#include <atomic>
#include <cstdint>

namespace zarrd {

struct EngineStats {
  std::atomic<uint64_t> chunks_decoded{0};  // chunks (or inner chunks) run through a codec chain
  std::atomic<uint64_t> chunks_encoded{0};
  std::atomic<uint64_t> chunks_filled{0};       // absent chunks read as the fill value
  std::atomic<uint64_t> chunks_gpu_decoded{0};  // handed to a sink encoded, decoded on the GPU
};

EngineStats& GlobalEngineStats();

}  // namespace zarrd
