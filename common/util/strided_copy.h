// N-dimensional copies between strided layouts: the placement step of every read and write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zarrd {

// Byte strides of a C-order array of `shape` with `elem_size`-byte elements.
std::vector<int64_t> COrderStrides(const std::vector<int64_t>& shape, size_t elem_size);

// dst[i] = src[i] for every index i < counts, strides in bytes (negative allowed).
void StridedCopy(const uint8_t* src, const int64_t* src_strides, uint8_t* dst,
                 const int64_t* dst_strides, const int64_t* counts, size_t rank, size_t elem_size);

// dst[i] = value (one element of `elem_size` bytes) for every index i < counts.
void StridedFill(uint8_t* dst, const int64_t* dst_strides, const int64_t* counts, size_t rank,
                 const uint8_t* value, size_t elem_size);

// True when all `count` elements at `data` equal `value`.
bool AllEqual(const uint8_t* data, size_t count, const uint8_t* value, size_t elem_size);

}  // namespace zarrd
