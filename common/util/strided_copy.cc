#include "common/util/strided_copy.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace zarrd {
namespace {

struct Layout {
  std::vector<int64_t> counts, src, dst;
};

// Drops unit dimensions and merges dimensions that are contiguous in both layouts.
Layout Simplify(const int64_t* src_strides, const int64_t* dst_strides, const int64_t* counts,
                size_t rank) {
  Layout l;
  for (size_t d = 0; d < rank; ++d) {
    if (counts[d] == 1) continue;
    int64_t s = src_strides ? src_strides[d] : 0;
    if (!l.counts.empty() && l.src.back() == s * counts[d] &&
        l.dst.back() == dst_strides[d] * counts[d]) {
      l.counts.back() *= counts[d];
      l.src.back() = s;
      l.dst.back() = dst_strides[d];
      continue;
    }
    l.counts.push_back(counts[d]);
    l.src.push_back(s);
    l.dst.push_back(dst_strides[d]);
  }
  return l;
}

inline void CopyElement(uint8_t* dst, const uint8_t* src, size_t n) {
  switch (n) {
    case 1:
      *dst = *src;
      return;
    case 2:
      std::memcpy(dst, src, 2);
      return;
    case 4:
      std::memcpy(dst, src, 4);
      return;
    case 8:
      std::memcpy(dst, src, 8);
      return;
    default:
      std::memcpy(dst, src, n);
  }
}

// Large copies go to memory that the copying core will not read again soon: non-temporal stores
// skip the read-for-ownership of every destination line, which is most of a row copy's cost.
constexpr int64_t kStreamingMinTotal = 512 << 10;
constexpr int64_t kStreamingMinRun = 256;

inline void StreamCopy(uint8_t* dst, const uint8_t* src, size_t n) {
#if defined(__SSE2__)
  size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
  if (head > n) head = n;
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  for (; n >= 64; n -= 64, dst += 64, src += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
    __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), d);
  }
  std::memcpy(dst, src, n);
#else
  std::memcpy(dst, src, n);
#endif
}

inline void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace

std::vector<int64_t> COrderStrides(const std::vector<int64_t>& shape, size_t elem_size) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = static_cast<int64_t>(elem_size);
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

void StridedCopy(const uint8_t* src, const int64_t* src_strides, uint8_t* dst,
                 const int64_t* dst_strides, const int64_t* counts, size_t rank, size_t elem_size) {
  for (size_t d = 0; d < rank; ++d) {
    if (counts[d] <= 0) return;
  }
  Layout l = Simplify(src_strides, dst_strides, counts, rank);
  const int64_t es = static_cast<int64_t>(elem_size);
  if (l.counts.empty()) {
    std::memcpy(dst, src, elem_size);
    return;
  }
  const size_t n = l.counts.size();
  const int64_t inner = l.counts[n - 1];
  const bool inner_contiguous = l.src[n - 1] == es && l.dst[n - 1] == es;
  int64_t total = es;
  for (int64_t c : l.counts) total *= c;
  const bool streaming =
      inner_contiguous && total >= kStreamingMinTotal && inner * es >= kStreamingMinRun;
  std::vector<int64_t> index(n, 0);
  while (true) {
    if (streaming) {
      StreamCopy(dst, src, static_cast<size_t>(inner * es));
    } else if (inner_contiguous) {
      std::memcpy(dst, src, static_cast<size_t>(inner * es));
    } else {
      const uint8_t* s = src;
      uint8_t* t = dst;
      for (int64_t i = 0; i < inner; ++i, s += l.src[n - 1], t += l.dst[n - 1]) {
        CopyElement(t, s, elem_size);
      }
    }
    size_t d = n - 1;
    while (true) {
      if (d == 0) {
        if (streaming) StreamFence();
        return;
      }
      --d;
      src += l.src[d];
      dst += l.dst[d];
      if (++index[d] < l.counts[d]) break;
      src -= l.src[d] * l.counts[d];
      dst -= l.dst[d] * l.counts[d];
      index[d] = 0;
    }
  }
}

void StridedFill(uint8_t* dst, const int64_t* dst_strides, const int64_t* counts, size_t rank,
                 const uint8_t* value, size_t elem_size) {
  for (size_t d = 0; d < rank; ++d) {
    if (counts[d] <= 0) return;
  }
  Layout l = Simplify(nullptr, dst_strides, counts, rank);
  if (l.counts.empty()) {
    std::memcpy(dst, value, elem_size);
    return;
  }
  bool uniform = true;
  for (size_t b = 1; b < elem_size; ++b) uniform &= value[b] == value[0];
  const size_t n = l.counts.size();
  const int64_t inner = l.counts[n - 1];
  const int64_t es = static_cast<int64_t>(elem_size);
  const bool inner_contiguous = l.dst[n - 1] == es;
  std::vector<int64_t> index(n, 0);
  while (true) {
    if (inner_contiguous && uniform) {
      std::memset(dst, value[0], static_cast<size_t>(inner * es));
    } else {
      uint8_t* t = dst;
      for (int64_t i = 0; i < inner; ++i, t += l.dst[n - 1]) CopyElement(t, value, elem_size);
    }
    size_t d = n - 1;
    while (true) {
      if (d == 0) return;
      --d;
      dst += l.dst[d];
      if (++index[d] < l.counts[d]) break;
      dst -= l.dst[d] * l.counts[d];
      index[d] = 0;
    }
  }
}

bool AllEqual(const uint8_t* data, size_t count, const uint8_t* value, size_t elem_size) {
  bool uniform = true;
  for (size_t b = 1; b < elem_size; ++b) uniform &= value[b] == value[0];
  const size_t nbytes = count * elem_size;
  if (uniform) {
    // Compare word-wise against a replicated byte.
    uint64_t word;
    std::memset(&word, value[0], 8);
    size_t i = 0;
    for (; i + 8 <= nbytes; i += 8) {
      uint64_t v;
      std::memcpy(&v, data + i, 8);
      if (v != word) return false;
    }
    for (; i < nbytes; ++i) {
      if (data[i] != value[0]) return false;
    }
    return true;
  }
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(data + i * elem_size, value, elem_size) != 0) return false;
  }
  return true;
}

}  // namespace zarrd
