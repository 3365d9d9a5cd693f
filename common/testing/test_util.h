// Helpers for the engine's unit tests: fixture paths, files, .npy arrays.
#pragma once

#include <string>
#include <vector>

#include "common/codec/codec.h"
#include "common/index/selection.h"
#include "common/kvstore/store.h"
#include "common/metadata/metadata.h"

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

// Passes every call to another store; tests override what they watch or break.
class ForwardingStore : public Store {
 public:
  explicit ForwardingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
  Result<bool> Get(const std::string& key, Bytes* out) override { return inner_->Get(key, out); }
  Result<bool> GetRange(const std::string& key, ByteRange range, Bytes* out) override {
    return inner_->GetRange(key, range, out);
  }
  Status Set(const std::string& key, ByteView value) override { return inner_->Set(key, value); }
  Status Delete(const std::string& key) override { return inner_->Delete(key); }
  Result<std::vector<std::string>> List(const std::string& prefix) override {
    return inner_->List(prefix);
  }
  std::string Describe() const override { return "forwarding " + inner_->Describe(); }

 private:
  std::shared_ptr<Store> inner_;
};

// Zarr v3 array metadata: `codecs` as in zarr.json (null: the default bytes codec), fill 0.
ArrayMetadata V3Meta(std::vector<int64_t> shape, std::vector<int64_t> chunks,
                     const nlohmann::json& codecs, DataType dtype = DataType::kInt32);

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
