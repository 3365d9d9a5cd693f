// libFuzzer targets for the inflate core and its gzip/zlib wrappers (common/decode/deflate.h),
// against zlib. ZARRD_FUZZ_DIFFERENTIAL: the input picks zlib's settings (wrapper, level,
// strategy, window and memory size) and the data; our decoding of zlib's stream must give the
// data back. Otherwise the input is a stream (its first byte picks the wrapper): ours must not
// crash, and a stream ours finds complete and intact zlib must decode to the same bytes.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "common/decode/deflate.h"

namespace {

using zarrd::decode::DecodeError;

// Ours, copying from the output and again through windows of 32 KiB and of the least size (as the
// GPU kernel does); all must end alike with the same bytes.
DecodeError Ours(bool gzip, const uint8_t* src, size_t size, std::vector<uint8_t>* out,
                 uint64_t* written) {
  using namespace zarrd::decode;
  static auto* ws = new InflateWorkspace;
  static auto* window = new uint8_t[32768];
  const auto decode = [&](std::vector<uint8_t>* dst, uint64_t* n, InflateWindow w) {
    return gzip ? DecodeGzip(src, size, dst->data(), dst->size(), n, ws, SerialLanes(), w)
                : DecodeZlib(src, size, dst->data(), dst->size(), n, ws, SerialLanes(), w);
  };
  const DecodeError e = decode(out, written, {});
  if (*written > out->size()) std::abort();
  for (uint32_t window_size : {32768u, InflateWindow::kMinBytes}) {
    std::vector<uint8_t> through_window(out->size());
    uint64_t window_written = 0;
    if (decode(&through_window, &window_written, {window, window_size}) != e ||
        window_written != *written ||
        !std::equal(out->begin(), out->begin() + *written, through_window.begin())) {
      std::abort();
    }
  }
  return e;
}

// zlib's decoding of every member, at most `cap` bytes; false when zlib rejects the input.
bool ZlibInflate(bool gzip, const uint8_t* src, size_t size, size_t cap,
                 std::vector<uint8_t>* out) {
  z_stream z{};
  if (inflateInit2(&z, gzip ? 31 : 15) != Z_OK) std::abort();
  out->assign(cap + 1, 0);
  z.next_in = const_cast<Bytef*>(src);
  z.avail_in = size;
  z.next_out = out->data();
  z.avail_out = out->size();
  int rc;
  for (;;) {
    rc = inflate(&z, Z_FINISH);
    if (rc == Z_STREAM_END && gzip && z.avail_in > 0) {
      inflateReset(&z);
      continue;
    }
    break;
  }
  const bool ok = rc == Z_STREAM_END && z.avail_in == 0 && z.total_out <= cap;
  out->resize(out->size() - z.avail_out);
  inflateEnd(&z);
  return ok;
}

void Differential(const uint8_t* data, size_t size) {
  if (size < 3) return;
  const bool gzip = data[0] & 1;
  const int level = (data[0] >> 1) % 10;
  const int strategy = (data[0] >> 5) % 5;  // default, filtered, huffman only, rle, fixed
  const int window = 9 + data[1] % 7, mem = 1 + data[2] % 9;
  const std::vector<uint8_t> in(data + 3, data + size);
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, gzip ? window + 16 : window, mem, strategy) != Z_OK) {
    return;  // zlib refuses windowBits 8 with a gzip wrapper and the like
  }
  std::vector<uint8_t> c(deflateBound(&z, in.size()) + 64);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = in.size();
  z.next_out = c.data();
  z.avail_out = c.size();
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  c.resize(z.total_out);
  deflateEnd(&z);
  std::vector<uint8_t> out(in.size());
  uint64_t written = 0;
  if (Ours(gzip, c.data(), c.size(), &out, &written) != DecodeError::kOk || out != in) {
    std::abort();
  }
}

void Garbage(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const bool gzip = data[0] & 1;
  constexpr size_t kCap = 1 << 18;
  std::vector<uint8_t> out(kCap);
  uint64_t written = 0;
  const DecodeError e = Ours(gzip, data + 1, size - 1, &out, &written);
  if (e != DecodeError::kOk && e != DecodeError::kOutputShort) return;
  // The stream is complete and its checksums hold: zlib must agree.
  out.resize(written);
  std::vector<uint8_t> lib;
  if (!ZlibInflate(gzip, data + 1, size - 1, kCap, &lib) || lib != out) std::abort();
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
