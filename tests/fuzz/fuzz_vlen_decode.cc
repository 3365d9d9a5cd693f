// libFuzzer target for the vlen-utf8 and vlen-bytes decoders: the first input byte picks the
// codec and the chunk's element count (0-127), the rest is the encoded chunk. Decoding must fail
// cleanly (DATA_LOSS) or give strings that encode back to the bytes it read.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/codec/codec.h"
#include "common/codec/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zarrd;
  if (size < 1) return 0;
  const bool utf8 = data[0] & 0x80;
  StringArena arena;
  const ChunkSpec spec{utf8 ? DataType::kString : DataType::kBytes,
                       {static_cast<int64_t>(data[0] & 0x7f)},
                       StringFillValue(""),
                       &arena};
  auto codec = MakeCodec<ArrayToBytesCodec>(utf8 ? "vlen-utf8" : "vlen-bytes",
                                            nlohmann::json::object(), spec);
  if (!codec.ok()) std::abort();
  const ByteView in(data + 1, size - 1);
  Bytes handles(spec.num_bytes());
  Status s = (*codec)->Decode(spec, in, handles.data());
  if (!s.ok()) {
    if (s.code() != StatusCode::kDataLoss) std::abort();
    return 0;
  }
  Bytes encoded;
  if (!(*codec)->Encode(spec, handles.data(), &encoded).ok()) std::abort();
  if (encoded.size() > in.size() || !std::equal(encoded.begin(), encoded.end(), in.begin())) {
    std::abort();
  }
  return 0;
}
