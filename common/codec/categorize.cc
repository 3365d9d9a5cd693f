// numcodecs' Categorize filter: each string becomes 1 + the index of its label (the last equal
// label's), 0 when it is no label, stored as the unsigned integer type `astype`; decoding maps
// each index back to its label and 0 (or an index past the labels) to "".
#include <algorithm>
#include <unordered_map>

#include "common/codec/codec.h"
#include "common/codec/numpy_scalar.h"
#include "common/codec/registry.h"

namespace zarrd {
namespace {

using nlohmann::json;

class CategorizeCodec : public ArrayToArrayCodec {
 public:
  CategorizeCodec(json labels, std::string dtype, DataType astype)
      : labels_json_(std::move(labels)), dtype_(std::move(dtype)), astype_(astype) {
    for (const json& l : labels_json_) labels_.push_back(InternString(l.get<std::string>()));
    for (size_t i = 0; i < labels_.size(); ++i) index_[*labels_[i]] = i + 1;
  }

  DataType EncodedDtype(DataType) const override { return astype_; }

  void Encode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t size = ItemSize(astype_);
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      const uint8_t* handle = in + i * kStringHandleSize;
      auto it = index_.find(LoadStringHandle(handle));
      // The null handle is zarr 2's fill value 0 of "|O" arrays: a number, no label.
      const bool null =
          std::all_of(handle, handle + kStringHandleSize, [](uint8_t b) { return !b; });
      const uint64_t code = null || it == index_.end() ? 0 : it->second;
      for (size_t b = 0; b < size; ++b) out[i * size + b] = static_cast<uint8_t>(code >> (8 * b));
    }
  }

  void Decode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t size = ItemSize(astype_);
    for (int64_t i = 0, n = spec.num_elements(); i < n; ++i) {
      uint64_t code = 0;
      for (size_t b = 0; b < size; ++b) code |= uint64_t{in[i * size + b]} << (8 * b);
      StoreStringHandle(out + i * kStringHandleSize,
                        code >= 1 && code <= labels_.size() ? labels_[code - 1].get() : nullptr);
    }
  }

  json ToJson() const override {
    return {{"name", "numcodecs.categorize"},
            {"configuration",
             {{"labels", labels_json_}, {"dtype", dtype_}, {"astype", NumcodecsTypestr(astype_)}}}};
  }

 private:
  json labels_json_;
  std::string dtype_;
  DataType astype_;
  std::vector<SharedString> labels_;  // interned: the same strings as other metadata's equal labels
  std::unordered_map<std::string, uint64_t> index_;
};

Result<std::unique_ptr<ArrayToArrayCodec>> MakeCategorize(const json& config,
                                                          const ChunkSpec& spec) {
  for (const auto& [key, value] : config.items()) {
    if (key != "id" && key != "labels" && key != "dtype" && key != "astype") {
      return internal::ConfigError("categorize", key, "is not a known field");
    }
  }
  if (!config.contains("labels") || !config["labels"].is_array()) {
    return internal::ConfigError("categorize", "labels", "must be a list of strings");
  }
  for (const json& l : config["labels"]) {
    if (!l.is_string()) return internal::ConfigError("categorize", "labels", "must be strings");
  }
  if (!config.contains("dtype") || !config["dtype"].is_string()) {
    return internal::ConfigError("categorize", "dtype", "must be \"|O\" or \"<U<n>\"");
  }
  const std::string dtype = config["dtype"].get<std::string>();
  auto decoded = ParseV2DataType(dtype);
  if (!decoded.ok() || decoded->dtype != DataType::kString) {
    return internal::ConfigError("categorize", "dtype",
                                 "\"" + dtype + "\": categorize decodes to \"|O\" or \"<U<n>\"");
  }
  if (spec.dtype != DataType::kString) {
    return internal::ConfigError("categorize", "dtype",
                                 "\"" + dtype + "\" is not the type of the chunks it gets (" +
                                     std::string(V3Name(spec.dtype)) + ")");
  }
  DataType astype = DataType::kUint8;
  if (config.contains("astype") && !config["astype"].is_null()) {
    ZARRD_ASSIGN_OR_RETURN(astype, ParseNumcodecsDtype(config, "categorize", "astype"));
  }
  if (Kind(astype) != DataTypeKind::kUnsigned && Kind(astype) != DataTypeKind::kSigned) {
    return internal::ConfigError("categorize", "astype", "must be an integer type");
  }
  return std::unique_ptr<ArrayToArrayCodec>(new CategorizeCodec(config["labels"], dtype, astype));
}

}  // namespace

namespace internal {
Status RegisterCategorizeCodec(CodecRegistry& registry) {
  return registry.Register({.v2_ids = {"categorize"}, .make = &MakeCategorize});
}
}  // namespace internal

}  // namespace zarrd
