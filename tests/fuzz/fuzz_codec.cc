// libFuzzer target for one bytes->bytes codec's decoder (ZARRD_FUZZ_CODEC names it): decoding
// arbitrary input must fail cleanly or stay within its bound, and what decodes must encode and
// decode back to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

namespace {

using namespace zarrd;

const BytesToBytesCodec& Codec() {
  static const std::unique_ptr<BytesToBytesCodec> codec = [] {
    const std::string name = ZARRD_FUZZ_CODEC;
    nlohmann::json config = {{"id", name}, {"level", 1}};
    if (name == "crc32c") config = {{"id", name}};
    if (name == "blosc") {
      config = {{"id", name}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0u}};
    }
    auto made = MakeV2Compressor(config, DataType::kFloat32);
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
      std::abort();
    }
    return std::move(*made);
  }();
  return *codec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const BytesToBytesCodec& codec = Codec();
  const ByteView in(data, size);
  constexpr size_t kMax = 1 << 20;
  Bytes out;
  if (!codec.Decode(in, &out, kMax).ok()) {
    Bytes fixed(4096);
    (void)codec.DecodeInto(in, fixed);
    return 0;
  }
  if (out.size() > kMax) std::abort();
  Bytes exact(out.size());
  if (!codec.DecodeInto(in, exact).ok() || exact != out) std::abort();
  Bytes encoded, decoded;
  if (!codec.Encode(out, &encoded).ok()) std::abort();
  if (!codec.Decode(encoded, &decoded, kMax).ok() || decoded != out) std::abort();
  return 0;
}
