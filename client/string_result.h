// String results (see ArrayDescriptor in proto/zarrd/v1/zarrd.proto) written to files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/client.h"

namespace zarrd::client {

// Writes the wire form `wire` of a result of `shape` of a string array to the file `out`:
// fixed-length strings as numpy holds them (a .npy file, else raw), variable-length ones one
// element a line (a JSON string for data type string, base64 for bytes).
Status WriteStringResult(const NodeInfo& node, const std::string& wire,
                         const std::vector<int64_t>& shape, const std::string& out);

}  // namespace zarrd::client
