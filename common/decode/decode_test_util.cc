#include "common/decode/decode_test_util.h"

#include <blosc.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/testing/test_util.h"

namespace zarrd::decode::testing {

Buffer Payload(int kind, size_t n, uint32_t seed) {
  Buffer out(n);
  std::mt19937 rng(seed);
  if (kind == 0) {
    for (size_t i = 0; i + 4 <= n; i += 4) {
      const float v = static_cast<float>(std::sin(i * 0.001 + seed) * 100.0);
      std::memcpy(out.data() + i, &v, 4);
    }
    for (size_t i = n / 4 * 4; i < n; ++i) out[i] = static_cast<uint8_t>(i);
  } else if (kind == 1) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>((i / 7) % 13 + (i % 3));
  } else if (kind == 2) {
    for (auto& b : out) b = static_cast<uint8_t>(rng());
  } else {
    for (size_t i = 0; i < n;) {
      const size_t run = std::min<size_t>(n - i, 1 + rng() % 300);
      const bool random = rng() % 2;
      const uint8_t v = static_cast<uint8_t>(rng());
      for (size_t k = 0; k < run; ++k) out[i + k] = random ? static_cast<uint8_t>(rng()) : v;
      i += run;
    }
  }
  return out;
}

Buffer BloscCompress(const Buffer& data, const char* cname, int clevel, int shuffle, int typesize,
                     size_t blocksize) {
  Buffer out(data.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(clevel, shuffle, typesize, data.size(), data.data(), out.data(),
                                   out.size(), cname, blocksize, 1);
  out.resize(n > 0 ? n : 0);
  return out;
}

namespace {
uint32_t Le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24; }
}  // namespace

bool LibBloscDecode(const Buffer& c, Buffer* out) {
  size_t nbytes = 0, cbytes = 0;
  if (c.size() < BLOSC_MIN_HEADER_LENGTH) return false;
  if (blosc_cbuffer_validate(c.data(), c.size(), &nbytes) != 0) return false;
  out->assign(nbytes, 0);
  blosc_cbuffer_sizes(c.data(), &nbytes, &cbytes, &cbytes);
  return blosc_decompress_ctx(c.data(), out->data(), out->size(), 1) == static_cast<int>(nbytes);
}

Buffer ZlibDeflate(const Buffer& data, int level, int strategy, int window_bits,
                   gz_header* header) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, strategy), Z_OK);
  if (header) {
    EXPECT_EQ(deflateSetHeader(&z, header), Z_OK);
  }
  Buffer out(deflateBound(&z, data.size()) + 64);
  z.next_in = const_cast<Bytef*>(data.data());
  z.avail_in = data.size();
  z.next_out = out.data();
  z.avail_out = out.size();
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// zlib's decoding (all gzip members for windowBits 31); false when zlib rejects the stream.
bool ZlibInflate(const Buffer& in, int window_bits, Buffer* out) {
  out->clear();
  z_stream z{};
  if (inflateInit2(&z, window_bits) != Z_OK) return false;
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = in.size();
  uint8_t chunk[65536];
  int rc = Z_OK;
  for (;;) {
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    rc = ::inflate(&z, Z_NO_FLUSH);
    out->insert(out->end(), chunk, chunk + (sizeof chunk - z.avail_out));
    if (rc == Z_STREAM_END && z.avail_in > 0 && window_bits > 15) {
      inflateReset(&z);
      continue;
    }
    if (rc != Z_OK) break;
  }
  const bool ok = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  return ok;
}

std::vector<Split> SplitsOf(const Buffer& container, const Buffer& data) {
  std::vector<Split> out;
  const uint32_t blocksize = Le32(container.data() + 8);
  for (size_t start = 0, b = 0; start < data.size(); start += blocksize, ++b) {
    const uint32_t at = Le32(container.data() + 16 + 4 * b);
    const uint32_t csize = Le32(container.data() + at);
    const size_t size = std::min<size_t>(blocksize, data.size() - start);
    out.push_back({Buffer(container.begin() + at + 4, container.begin() + at + 4 + csize),
                   Buffer(data.begin() + start, data.begin() + start + size)});
  }
  return out;
}

std::vector<std::string> FixtureFiles() {
  std::vector<std::string> out;
  for (const char* peer : {"zarrs", "zarrita"}) {
    const auto root = std::filesystem::path(zarrd::testing::FixturesDir()) / peer;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Buffer ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Buffer(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

DecodeError LibZstd::operator()(const uint8_t* src, uint64_t src_size, uint8_t* dst,
                                uint64_t dst_size, uint64_t* written) const {
  const size_t n = ZSTD_decompress(dst, dst_size, src, src_size);
  if (ZSTD_isError(n)) return DecodeError::kCorrupt;
  *written = n;
  return n == dst_size ? DecodeError::kOk : DecodeError::kOutputShort;
}

}  // namespace zarrd::decode::testing
