// Whole files read into memory (certificates, the config file, small documents).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "common/util/status.h"

namespace zarrd {

// The file's bytes; NOT_FOUND naming the path when it cannot be opened, INVALID_ARGUMENT when it
// is not a regular file (a FIFO is not waited on) or holds more than `max_bytes`.
Result<std::string> ReadTextFile(const std::string& path,
                                 uint64_t max_bytes = std::numeric_limits<uint64_t>::max());

}  // namespace zarrd
