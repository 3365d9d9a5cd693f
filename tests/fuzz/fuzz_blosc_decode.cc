// libFuzzer targets for the blosc 1 decoding core (common/decode/blosc1.h) with the zstd core the
// GPU uses for zstd splits, against libblosc.
// ZARRD_FUZZ_DIFFERENTIAL: the input picks libblosc's settings (codec, level, shuffle, typesize,
// block size) and the data; our decoding of libblosc's container must give the data back.
// Otherwise the input is a container: ours must not crash, and what ours accepts libblosc must
// accept and decode to the same bytes.
#include <blosc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/decode/blosc1.h"
#include "common/decode/zstd_decode.h"

namespace {

using zarrd::decode::DecodeError;

// zstd splits go through zstd_decode.h's frame decoder, as on the GPU.
struct OurZstd {
  DecodeError operator()(const uint8_t* src, uint64_t n, uint8_t* dst, uint64_t dst_size,
                         uint64_t* written) const {
    static auto* ws = new zarrd::decode::ZstdWorkspace();
    return zarrd::decode::DecodeZstd(src, n, dst, dst_size, written, ws);
  }
};

DecodeError Ours(const uint8_t* src, size_t size, std::vector<uint8_t>* out) {
  std::vector<uint8_t> scratch(out->size());
  uint64_t written = 0;
  const DecodeError e = zarrd::decode::DecodeBlosc1(src, size, out->data(), out->size(),
                                                    scratch.data(), &written, OurZstd());
  if (written > out->size()) std::abort();
  return e;
}

void Differential(const uint8_t* data, size_t size) {
  if (size < 4) return;
  static const char* const kCodecs[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
  const char* cname = kCodecs[data[0] % 6];
  if (blosc_compname_to_compcode(cname) < 0) return;
  const int clevel = data[1] % 10, shuffle = (data[1] / 10) % 3;
  const int typesize = 1 + data[2] % 16;
  const size_t blocksize = data[3] < 128 ? 0 : size_t{data[3]} * 64;
  const std::vector<uint8_t> in(data + 4, data + size);
  std::vector<uint8_t> c(in.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(clevel, shuffle, typesize, in.size(), in.data(), c.data(),
                                   c.size(), cname, blocksize, 1);
  if (n <= 0) std::abort();
  std::vector<uint8_t> out(in.size());
  if (Ours(c.data(), n, &out) != DecodeError::kOk || out != in) std::abort();
}

void Garbage(const uint8_t* data, size_t size) {
  if (size < 16) {
    std::vector<uint8_t> out(8);
    (void)Ours(data, size, &out);
    return;
  }
  const uint32_t nbytes = data[4] | data[5] << 8 | data[6] << 16 | uint32_t{data[7]} << 24;
  std::vector<uint8_t> out(nbytes <= (1u << 20) ? nbytes : 64);
  if (Ours(data, size, &out) != DecodeError::kOk) return;
  size_t lib_nbytes = 0;
  if (blosc_cbuffer_validate(data, size, &lib_nbytes) != 0 || lib_nbytes != out.size()) {
    std::abort();
  }
  std::vector<uint8_t> lib(out.size());
  if (blosc_decompress_ctx(data, lib.data(), lib.size(), 1) != static_cast<int>(lib.size()) ||
      lib != out) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#if defined(ZARRD_FUZZ_DIFFERENTIAL)
  Differential(data, size);
#else
  Garbage(data, size);
#endif
  return 0;
}
