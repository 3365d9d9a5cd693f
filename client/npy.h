// .npy files (format 1.0/2.0) for zarrctl get/put: little-endian, C or Fortran order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/util/status.h"

namespace zarrd::client {

struct NpyFile {
  std::string descr;  // numpy typestr, e.g. "<f4"
  std::vector<int64_t> shape;
  bool fortran_order = false;
  std::vector<uint8_t> data;
};

Status WriteNpy(const std::string& path, const std::string& descr,
                const std::vector<int64_t>& shape, const uint8_t* data, size_t size);
// Reads and converts to C order and little-endian.
Result<NpyFile> ReadNpy(const std::string& path);

}  // namespace zarrd::client
