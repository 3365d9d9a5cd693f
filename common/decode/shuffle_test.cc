// Byte and bit unshuffle against the layouts written out element by element (byte shuffle: numpy's
// view(uint8).reshape(n, typesize).T; bit shuffle: bitshuffle's bit rows), and against libblosc
// through memcpy-split containers in blosc1_test.cc.
#include "common/decode/shuffle.h"

#include <gtest/gtest.h>

#include "common/decode/decode_test_util.h"

namespace zarrd::decode {
namespace {

using testing::Buffer;

Buffer ShuffleBytes(const Buffer& in, uint32_t ts) {
  const size_t n = in.size() / ts;
  Buffer out = in;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < ts; ++j) out[j * n + i] = in[i * ts + j];
  }
  return out;
}

Buffer ShuffleBits(const Buffer& in, uint32_t ts) {
  const size_t n = in.size() / ts / 8 * 8;
  Buffer out = in;
  for (size_t k = 0; k < n * ts; ++k) out[k] = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < ts; ++j) {
      for (size_t b = 0; b < 8; ++b) {
        const size_t row = j * 8 + b;
        if ((in[i * ts + j] >> b) & 1) out[row * (n / 8) + i / 8] |= 1 << (i % 8);
      }
    }
  }
  return out;
}

TEST(Shuffle, ByteUnshuffleInvertsTheLayout) {
  for (uint32_t ts : {1u, 2u, 3u, 4u, 8u, 12u, 255u}) {
    for (size_t size : {0, 1, 7, 8, 64, 1000, 4099}) {
      const Buffer data = testing::Payload(2, size, ts + size);
      const Buffer shuffled = ShuffleBytes(data, ts);
      Buffer out(size);
      Unshuffle(shuffled.data(), size, ts, out.data());
      EXPECT_EQ(out, data) << ts << " " << size;
    }
  }
}

TEST(Shuffle, BitUnshuffleInvertsTheLayout) {
  for (uint32_t ts : {1u, 2u, 3u, 4u, 8u, 12u}) {
    for (size_t size : {0, 1, 7, 8, 64, 1000, 4099, 8 * 12 * 5 + 3}) {
      const Buffer data = testing::Payload(2, size, ts * 3 + size);
      const bool applies = size >= ts && (size / ts) % 8 == 0;
      EXPECT_EQ(BitshuffleApplies(size, ts), applies);
      const Buffer shuffled = applies ? ShuffleBits(data, ts) : data;
      Buffer out(size);
      Bitunshuffle(shuffled.data(), size, ts, out.data());
      EXPECT_EQ(out, data) << ts << " " << size;
    }
  }
}

// Lanes that take every fourth byte, as a warp would take every 32nd.
struct FourthLanes {
  uint32_t l;
  uint32_t lane() const { return l; }
  uint32_t count() const { return 4; }
  void Sync() const {}
  uint32_t Broadcast(uint32_t v) const { return v; }
};

TEST(Shuffle, LanesTogetherWriteEveryByte) {
  const Buffer data = testing::Payload(2, 8 * 4 * 33 + 2, 5);
  const Buffer bits = ShuffleBits(data, 4), bytes = ShuffleBytes(data, 4);
  Buffer out_bits(data.size()), out_bytes(data.size());
  for (uint32_t l = 0; l < 4; ++l) {
    Bitunshuffle(bits.data(), bits.size(), 4, out_bits.data(), FourthLanes{l});
    Unshuffle(bytes.data(), bytes.size(), 4, out_bytes.data(), FourthLanes{l});
  }
  EXPECT_EQ(out_bits, data);
  EXPECT_EQ(out_bytes, data);
  for (size_t k = 0; k < data.size(); ++k) {
    ASSERT_EQ(BitunshuffleByte(bits.data(), bits.size(), 4, k), data[k]) << k;
    ASSERT_EQ(UnshuffleByte(bytes.data(), bytes.size(), 4, k), data[k]) << k;
  }
}

}  // namespace
}  // namespace zarrd::decode
