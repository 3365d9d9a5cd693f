// libFuzzer target: the input, compressed by libzstd at a level and with frame options taken
// from its first byte, must decode with both our zstd decoders (frame by frame and block-parallel)
// to the input itself.
#include <cstdint>
#include <cstdlib>

#include "common/decode/zstd_test_util.h"

using namespace zarrd::decode;
using namespace zarrd::decode::testing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  CompressOptions o;
  o.level = int(data[0] % 28) - 5;  // -5 .. 22
  o.checksum = data[0] & 0x20;
  o.content_size = !(data[0] & 0x40);
  const Buffer input(data + 1, data + size);
  const Buffer frame = LibCompress(input, o);
  if (frame.empty()) std::abort();
  for (ZstdCore core : {ZstdCore::kFrames, ZstdCore::kBlocks}) {
    Buffer ours;
    if (OurDecompress(frame.data(), frame.size(), input.size(), &ours, core) != DecodeError::kOk) {
      std::abort();
    }
    if (ours != input) std::abort();
  }
  return 0;
}
