// The GPU limits the benchmarks print beside zarrd's figures, measured in the same run.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zarrd::bench {

struct CopyLimits {
  double h2d_gbps = 0;  // pinned host to device
  double d2d_gbps = 0;  // device to device
};

// Best of `repeat` copies of `bytes` from pinned `host` into `dev`, and from `dev` into `dev2`
// (best of repeat + 2: the first device-to-device copies run slower). Exits the benchmark when
// a copy fails.
CopyLimits MeasureCopyLimits(const uint8_t* host, uint8_t* dev, uint8_t* dev2, size_t bytes,
                             int repeat);

}  // namespace zarrd::bench
