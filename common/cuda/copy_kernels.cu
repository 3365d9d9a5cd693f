#include <algorithm>

#include "common/cuda/copy_kernels.h"
#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {
namespace {

constexpr int kThreads = 256;

// Rows are the index space over every dimension but the last; the last is copied by the block.
__device__ __forceinline__ void RowOffsets(const StridedCopyDesc& d, int64_t row, int64_t* src_off,
                                           int64_t* dst_off) {
  int64_t s = 0, t = 0;
  for (int k = d.rank - 2; k >= 0; --k) {
    const int64_t i = row % d.counts[k];
    row /= d.counts[k];
    s += i * d.src_strides[k];
    t += i * d.dst_strides[k];
  }
  *src_off = s;
  *dst_off = t;
}

// A warp copies one tile: up to kTileBytes of a byte row, or kTileElems of an element row.
constexpr int kWarps = kThreads / 32;
constexpr int64_t kTileBytes = 4096;
constexpr int64_t kTileElems = 1024;

template <typename T>
__device__ __forceinline__ void CopyRow(const uint8_t* src, int64_t src_step, uint8_t* dst,
                                        int64_t dst_step, int64_t n, const uint8_t* fill,
                                        int lane) {
  if (src == nullptr) {
    const T v = *reinterpret_cast<const T*>(fill);
    for (int64_t i = lane; i < n; i += 32) *reinterpret_cast<T*>(dst + i * dst_step) = v;
    return;
  }
  for (int64_t i = lane; i < n; i += 32) {
    *reinterpret_cast<T*>(dst + i * dst_step) = *reinterpret_cast<const T*>(src + i * src_step);
  }
}

// Contiguous words: four loads in flight per lane before their stores.
template <typename T>
__device__ __forceinline__ void CopyVectors(const T* __restrict__ src, T* __restrict__ dst,
                                            int64_t n, int lane) {
  int64_t i = lane;
  for (; i + 96 < n; i += 128) {
    const T a = src[i], b = src[i + 32], c = src[i + 64], d = src[i + 96];
    dst[i] = a;
    dst[i + 32] = b;
    dst[i + 64] = c;
    dst[i + 96] = d;
  }
  for (; i < n; i += 32) dst[i] = src[i];
}

// Contiguous bytes: the widest access both ends allow.
__device__ __forceinline__ void CopyBytes(const uint8_t* src, uint8_t* dst, int64_t n,
                                          const uint8_t* fill, int elem_size, int lane) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst) | static_cast<uintptr_t>(n) |
                      (src ? reinterpret_cast<uintptr_t>(src) : 0);
  if (src == nullptr) {
    // A fill pattern repeats every elem_size bytes; 16-byte vectors hold whole patterns.
    if ((a & 15) == 0) {
      uint4 v;
      uint8_t* vb = reinterpret_cast<uint8_t*>(&v);
      for (int i = 0; i < 16; ++i) vb[i] = fill[i % elem_size];
      for (int64_t i = lane; i < n / 16; i += 32) reinterpret_cast<uint4*>(dst)[i] = v;
    } else {
      for (int64_t i = lane; i < n; i += 32) dst[i] = fill[i % elem_size];
    }
    return;
  }
  if ((a & 15) == 0) {
    CopyVectors(reinterpret_cast<const uint4*>(src), reinterpret_cast<uint4*>(dst), n / 16, lane);
  } else if ((a & 7) == 0) {
    CopyVectors(reinterpret_cast<const uint2*>(src), reinterpret_cast<uint2*>(dst), n / 8, lane);
  } else if ((a & 3) == 0) {
    CopyVectors(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst), n / 4,
                lane);
  } else {
    CopyRow<uint8_t>(src, 1, dst, 1, n, nullptr, lane);
  }
}

struct Tiling {
  int64_t rows, tiles_per_row, tile;
  bool bytes;
};

__host__ __device__ inline Tiling TilingOf(const StridedCopyDesc& d) {
  Tiling t;
  t.rows = 1;
  for (int k = 0; k + 1 < d.rank; ++k) t.rows *= d.counts[k];
  const int last = d.rank - 1;
  // Normalize turned a last dimension contiguous on both sides into bytes (stride 1).
  t.bytes = d.dst_strides[last] == 1 && (d.src == nullptr || d.src_strides[last] == 1);
  t.tile = t.bytes ? kTileBytes : kTileElems;
  t.tiles_per_row = (d.counts[last] + t.tile - 1) / t.tile;
  return t;
}

// The loop reads the descriptor's hot fields from registers: stores through `dst` could alias
// the descriptor as far as the compiler knows, which would reload them after every store.
__device__ void RunDesc(const StridedCopyDesc& d) {
  const Tiling t = TilingOf(d);
  const int rank = d.rank;
  const int last = rank - 1;
  const int lane = threadIdx.x % 32;
  const int64_t total = t.rows * t.tiles_per_row;
  const int64_t tiles_per_row = t.tiles_per_row, tile = t.tile, row_count = d.counts[last];
  const int64_t ss = d.src_strides[last], ds = d.dst_strides[last];
  const int64_t ss0 = rank == 2 ? d.src_strides[0] : 0, ds0 = rank == 2 ? d.dst_strides[0] : 0;
  const uint8_t* const src_base = d.src;
  uint8_t* const dst_base = d.dst;
  const int elem_size = d.elem_size;
  const bool bytes = t.bytes;
  for (int64_t w = int64_t{blockIdx.x} * kWarps + threadIdx.x / 32; w < total;
       w += int64_t{gridDim.x} * kWarps) {
    int64_t row = w, first = 0;
    if (tiles_per_row > 1) {
      row = w / tiles_per_row;
      first = (w - row * tiles_per_row) * tile;
    }
    const int64_t n = min(tile, row_count - first);
    int64_t so, to;
    if (rank <= 2) {
      so = row * ss0;
      to = row * ds0;
    } else {
      RowOffsets(d, row, &so, &to);
    }
    const uint8_t* src = src_base ? src_base + so + first * ss : nullptr;
    uint8_t* dst = dst_base + to + first * ds;
    if (bytes) {
      CopyBytes(src, dst, n, d.fill, elem_size, lane);
      continue;
    }
    switch (elem_size) {
      case 1:
        CopyRow<uint8_t>(src, ss, dst, ds, n, d.fill, lane);
        break;
      case 2:
        CopyRow<uint16_t>(src, ss, dst, ds, n, d.fill, lane);
        break;
      case 4:
        CopyRow<uint32_t>(src, ss, dst, ds, n, d.fill, lane);
        break;
      case 8:
        CopyRow<uint2>(src, ss, dst, ds, n, d.fill, lane);
        break;
      default:
        CopyRow<uint4>(src, ss, dst, ds, n, d.fill, lane);
        break;
    }
  }
}

__global__ void StridedCopyKernel(const StridedCopyDesc desc) { RunDesc(desc); }

static_assert(sizeof(StridedCopyDesc) % 4 == 0 && sizeof(StridedCopyDesc) / 4 <= kThreads);

// The block's descriptor is read from global memory once, into shared memory.
__global__ void StridedCopiesKernel(const StridedCopyDesc* descs) {
  __shared__ StridedCopyDesc desc;
  constexpr unsigned kWords = sizeof(StridedCopyDesc) / 4;
  if (threadIdx.x < kWords) {
    reinterpret_cast<uint32_t*>(&desc)[threadIdx.x] =
        reinterpret_cast<const uint32_t*>(descs + blockIdx.y)[threadIdx.x];
  }
  __syncthreads();
  RunDesc(desc);
}

// About two tiles a warp.
unsigned BlocksFor(const StridedCopyDesc& d) {
  const Tiling t = TilingOf(d);
  return static_cast<unsigned>(
      std::clamp<int64_t>((t.rows * t.tiles_per_row + 2 * kWarps - 1) / (2 * kWarps), 1, 8192));
}

// Drops one-element dimensions and merges neighbours contiguous on both sides; a fill has only
// the destination side. Then turns a contiguous last dimension into bytes.
Result<StridedCopyDesc> Normalize(StridedCopyDesc d, const int64_t* src_strides,
                                  const int64_t* dst_strides, const int64_t* counts, size_t rank) {
  int r = 0;
  for (size_t k = 0; k < rank; ++k) {
    if (counts[k] == 0) {
      d.rank = 0;
      return d;
    }
    if (counts[k] == 1) continue;
    const int64_t ss = d.src ? src_strides[k] : 0;
    if (r > 0) {
      const bool src_merge = !d.src || d.src_strides[r - 1] == ss * counts[k];
      if (src_merge && d.dst_strides[r - 1] == dst_strides[k] * counts[k]) {
        d.counts[r - 1] *= counts[k];
        d.src_strides[r - 1] = ss;
        d.dst_strides[r - 1] = dst_strides[k];
        continue;
      }
    }
    if (r == kMaxCopyRank) {
      return InvalidArgument("a GPU copy of more than " + std::to_string(kMaxCopyRank) +
                             " non-contiguous dimensions is not supported");
    }
    d.counts[r] = counts[k];
    d.src_strides[r] = ss;
    d.dst_strides[r] = dst_strides[k];
    ++r;
  }
  if (r == 0) {  // a single element
    d.counts[0] = 1;
    d.src_strides[0] = d.dst_strides[0] = d.elem_size;
    r = 1;
  }
  d.rank = r;
  const int last = r - 1;
  const bool dst_contiguous = d.dst_strides[last] == d.elem_size;
  const bool src_contiguous = !d.src || d.src_strides[last] == d.elem_size;
  if (dst_contiguous && src_contiguous) {
    d.counts[last] *= d.elem_size;
    d.src_strides[last] = d.dst_strides[last] = 1;
    if (d.src) d.elem_size = 1;  // fills keep the pattern length
  }
  return d;
}

}  // namespace

Result<StridedCopyDesc> MakeCopyDesc(const uint8_t* src, const int64_t* src_strides, uint8_t* dst,
                                     const int64_t* dst_strides, const int64_t* counts, size_t rank,
                                     size_t elem_size) {
  StridedCopyDesc d;
  d.src = src;
  d.dst = dst;
  d.elem_size = static_cast<int32_t>(elem_size);
  return Normalize(d, src_strides, dst_strides, counts, rank);
}

Result<StridedCopyDesc> MakeFillDesc(uint8_t* dst, const int64_t* dst_strides,
                                     const int64_t* counts, size_t rank, const uint8_t* value,
                                     size_t elem_size) {
  StridedCopyDesc d;
  d.dst = dst;
  d.elem_size = static_cast<int32_t>(elem_size);
  std::copy(value, value + elem_size, d.fill);
  return Normalize(d, nullptr, dst_strides, counts, rank);
}

Status LaunchStridedCopy(const StridedCopyDesc& desc, cudaStream_t stream) {
  if (desc.rank == 0) return OkStatus();
  StridedCopyKernel<<<BlocksFor(desc), kThreads, 0, stream>>>(desc);
  return CudaStatus(cudaGetLastError(), "strided copy kernel launch");
}

Status LaunchStridedCopies(const StridedCopyDesc* descs, size_t count, uint8_t* pinned,
                           uint8_t* device_scratch, cudaStream_t stream) {
  size_t n = 0;
  unsigned blocks = 1;
  auto* staged = reinterpret_cast<StridedCopyDesc*>(pinned);
  for (size_t i = 0; i < count; ++i) {
    if (descs[i].rank == 0) continue;
    staged[n++] = descs[i];
    blocks = std::max(blocks, BlocksFor(descs[i]));
  }
  if (n == 0) return OkStatus();
  ZARRD_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpyAsync(device_scratch, pinned, n * sizeof(StridedCopyDesc),
                                 cudaMemcpyHostToDevice, stream),
                 "copy descriptors upload"));
  auto* d = reinterpret_cast<const StridedCopyDesc*>(device_scratch);
  for (size_t first = 0; first < n; first += 65535) {
    const unsigned launched = static_cast<unsigned>(std::min<size_t>(65535, n - first));
    StridedCopiesKernel<<<dim3(blocks, launched), kThreads, 0, stream>>>(d + first);
    ZARRD_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "strided copies kernel launch"));
  }
  return OkStatus();
}

}  // namespace zarrd::cuda
