// libFuzzer target: arbitrary bytes through our zstd decoders must fail cleanly or decode; when
// libzstd also decodes them, to the same bytes; the block-parallel core accepts what the
// frame-by-frame one accepts (or says kUnsupported: too many blocks), with the same bytes. (libzstd
// accepts some streams that RFC 8878 calls corrupt and we reject, so rejecting what libzstd accepts
// is allowed.)
#include <cstdint>
#include <cstdlib>

#include "common/decode/zstd_test_util.h"

using namespace zarrd::decode;
using namespace zarrd::decode::testing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Buffer lib, ours;
  const bool lib_ok = LibDecompress(data, size, 256 << 10, &lib);
  const size_t dst_size = lib_ok ? lib.size() : 4096;
  const DecodeError e = OurDecompress(data, size, dst_size, &ours);
  if (lib_ok && e == DecodeError::kOk && ours != lib) std::abort();
  Buffer blocks;
  const DecodeError b = OurDecompress(data, size, dst_size, &blocks, ZstdCore::kBlocks);
  if (b != DecodeError::kUnsupported && (b == DecodeError::kOk) != (e == DecodeError::kOk)) {
    std::abort();
  }
  if (b == DecodeError::kOk && e == DecodeError::kOk && blocks != ours) std::abort();
  return 0;
}
