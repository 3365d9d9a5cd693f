#include <algorithm>

#include "common/codec/codec.h"
#include "common/codec/registry.h"
#include "common/util/strided_copy.h"

namespace zarrd {
namespace {

using nlohmann::json;

class TransposeCodec : public ArrayToArrayCodec {
 public:
  explicit TransposeCodec(std::vector<size_t> order) : order_(std::move(order)) {}

  std::vector<int64_t> EncodedShape(const std::vector<int64_t>& shape) const override {
    std::vector<int64_t> out(shape.size());
    for (size_t i = 0; i < order_.size(); ++i) out[i] = shape[order_[i]];
    return out;
  }

  // encoded[j] = decoded[j permuted]: walk the encoded array in C order.
  void Encode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t es = ItemSize(spec.dtype);
    auto in_strides = COrderStrides(spec.shape, es);
    auto enc_shape = EncodedShape(spec.shape);
    auto out_strides = COrderStrides(enc_shape, es);
    std::vector<int64_t> src(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) src[i] = in_strides[order_[i]];
    StridedCopy(in, src.data(), out, out_strides.data(), enc_shape.data(), order_.size(), es);
  }

  void Decode(const ChunkSpec& spec, const uint8_t* in, uint8_t* out) const override {
    const size_t es = ItemSize(spec.dtype);
    auto enc_strides = COrderStrides(EncodedShape(spec.shape), es);
    auto out_strides = COrderStrides(spec.shape, es);
    std::vector<int64_t> src(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) src[order_[i]] = enc_strides[i];
    StridedCopy(in, src.data(), out, out_strides.data(), spec.shape.data(), order_.size(), es);
  }

  std::vector<size_t> DimensionOrder() const override { return order_; }

  json ToJson() const override {
    return {{"name", "transpose"}, {"configuration", {{"order", order_}}}};
  }

 private:
  std::vector<size_t> order_;
};

Result<std::unique_ptr<ArrayToArrayCodec>> MakeTranspose(const json& config,
                                                         const ChunkSpec& spec) {
  const size_t rank = spec.shape.size();
  if (!config.contains("order")) return internal::ConfigError("transpose", "order", "is required");
  const json& o = config["order"];
  std::vector<size_t> order;
  if (o == "C" || o == "F") {
    for (size_t i = 0; i < rank; ++i) order.push_back(o == "C" ? i : rank - 1 - i);
  } else if (o.is_array()) {
    for (const json& v : o) {
      if (!v.is_number_unsigned()) {
        return internal::ConfigError("transpose", "order", "must hold non-negative integers");
      }
      order.push_back(v.get<size_t>());
    }
  } else {
    return internal::ConfigError("transpose", "order", "must be a permutation list");
  }
  std::vector<size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = sorted.size() == rank;
  for (size_t i = 0; is_permutation && i < rank; ++i) is_permutation = sorted[i] == i;
  if (!is_permutation) {
    return internal::ConfigError(
        "transpose", "order",
        o.dump() + " is not a permutation of " + std::to_string(rank) + " dimensions");
  }
  return std::unique_ptr<ArrayToArrayCodec>(new TransposeCodec(std::move(order)));
}

}  // namespace

namespace internal {
Status RegisterTransposeCodec(CodecRegistry& registry) {
  return registry.Register({.v3_names = {"transpose"}, .make = &MakeTranspose});
}
}  // namespace internal

}  // namespace zarrd
