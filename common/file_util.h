// Whole files read into memory (certificates, small documents).
#pragma once

#include <string>

#include "common/status.h"

namespace zarrd {

// The file's bytes; NOT_FOUND naming the path when it cannot be read.
Result<std::string> ReadTextFile(const std::string& path);

}  // namespace zarrd
