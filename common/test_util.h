// Helpers for the engine's unit tests: fixture paths, files, .npy arrays.
#pragma once

#include <string>
#include <vector>

#include "common/codec.h"

namespace zarrd::testing {

// ../shared/fixtures, or $ZARRD_FIXTURES when set.
std::string FixturesDir();
bool ReadFile(const std::string& path, Bytes* out);

struct NpyArray {
  std::string descr;  // numpy typestr
  bool fortran_order = false;
  std::vector<int64_t> shape;
  Bytes data;  // as stored (F order when fortran_order)
};
bool LoadNpy(const std::string& path, NpyArray* out);

// A fresh temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace zarrd::testing
