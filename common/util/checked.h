// Checked size arithmetic: every size derived from metadata or a request (element counts, byte
// sizes, chunk counts, selection and input sizes) is computed through these, so a product that
// does not fit is refused instead of wrapping around.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "common/util/status.h"

namespace zarrd {

// a * b, or nullopt when it does not fit in T (or is negative for unsigned T's inputs).
template <typename T>
std::optional<T> CheckedMul(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <typename T>
std::optional<T> CheckedAdd(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a * b, saturating at the largest uint64_t: for bounds that must not wrap but may be huge.
inline uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return CheckedMul(a, b).value_or(std::numeric_limits<uint64_t>::max());
}
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return CheckedAdd(a, b).value_or(std::numeric_limits<uint64_t>::max());
}

// The product of non-negative extents times `item_bytes` (1: an element count), or
// INVALID_ARGUMENT naming `what` when an extent is negative or the product exceeds `limit`.
inline Result<uint64_t> CheckedProduct(std::span<const int64_t> extents, uint64_t item_bytes,
                                       const std::string& what,
                                       uint64_t limit = std::numeric_limits<int64_t>::max()) {
  const auto too_large = [&] {
    return InvalidArgument(what + " overflows (exceeds " + std::to_string(limit) +
                           (item_bytes == 1 ? ")" : " bytes)"));
  };
  uint64_t product = item_bytes;
  for (int64_t e : extents) {
    if (e < 0) return InvalidArgument(what + ": negative extent " + std::to_string(e));
  }
  for (int64_t e : extents) {
    if (e == 0) return uint64_t{0};
  }
  for (int64_t e : extents) {
    auto next = CheckedMul(product, static_cast<uint64_t>(e));
    if (!next) return too_large();
    product = *next;
  }
  if (product > limit) return too_large();
  return product;
}

}  // namespace zarrd
