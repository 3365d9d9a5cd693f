// Decoding cores compile for the host (tested and fuzzed against the reference libraries) and,
// under nvcc, for the device (batched kernels in common/cuda). Code shared by both is marked
// ZARRD_HD and uses no exceptions, allocation or standard library calls that the device lacks.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ZARRD_HD __host__ __device__
#else
#define ZARRD_HD
#endif

// Before a loop with a constant trip count whose arrays must stay in registers on the GPU.
#if defined(__CUDA_ARCH__)
#define ZARRD_UNROLL _Pragma("unroll")
#else
#define ZARRD_UNROLL
#endif

namespace zarrd::decode {

// Why a decoding core stopped. Every core returns one; kOk means the output is complete.
enum class DecodeError : uint32_t {
  kOk = 0,
  kTruncated,       // the input ended inside a header, block or bit stream
  kCorrupt,         // a field holds a value the format does not allow
  kOutputOverrun,   // the input decodes to more bytes than the output holds
  kOutputShort,     // the input decodes to fewer bytes than the output must hold
  kChecksum,        // a checksum in the input does not match the output
  kUnsupported,     // valid input that this core does not decode (the CPU path will)
  kCrc32cMismatch,  // the crc32c stored after a chunk is not that of the bytes before it
};

ZARRD_HD inline const char* DecodeErrorName(DecodeError e) {
  switch (e) {
    case DecodeError::kOk:
      return "ok";
    case DecodeError::kTruncated:
      return "truncated input";
    case DecodeError::kCorrupt:
      return "corrupt input";
    case DecodeError::kOutputOverrun:
      return "decodes past the chunk's size";
    case DecodeError::kOutputShort:
      return "decodes to less than the chunk's size";
    case DecodeError::kChecksum:
      return "checksum mismatch";
    case DecodeError::kUnsupported:
      return "unsupported encoding";
    case DecodeError::kCrc32cMismatch:
      return "crc32c checksum mismatch";
  }
  return "unknown error";
}

// One unit of a batched decode: `src` decodes into exactly `dst_size` bytes at `dst`. The kernel
// writes `error` and `written`; pointers are device pointers on the GPU, host pointers in tests.
struct DecodeTask {
  const uint8_t* src = nullptr;
  uint64_t src_size = 0;
  uint8_t* dst = nullptr;
  uint64_t dst_size = 0;
  uint64_t written = 0;
  DecodeError error = DecodeError::kOk;
};

}  // namespace zarrd::decode
