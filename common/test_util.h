// Helpers for the engine's unit tests: fixture paths, files, .npy arrays.
#pragma once

#include <string>
#include <vector>

#include "common/codec.h"
#include "common/selection.h"

namespace zarrd::testing {

// tests/data/peers (the peer fixtures), or $ZARRD_FIXTURES when set.
std::string FixturesDir();
bool ReadFile(const std::string& path, Bytes* out);

struct NpyArray {
  std::string descr;  // numpy typestr
  bool fortran_order = false;
  std::vector<int64_t> shape;
  Bytes data;  // as stored (F order when fortran_order)
};
bool LoadNpy(const std::string& path, NpyArray* out);

// values[i] = 7 i + 1 over the flat C-order index: every element differs from its neighbours.
std::vector<int32_t> Pattern(int64_t n);
// The selection of `values` (C order, `shape`), computed element by element: the second source
// that engine reads are checked against.
std::vector<int32_t> Reference(const std::vector<int32_t>& values,
                               const std::vector<int64_t>& shape, const ResolvedSelection& sel);

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
