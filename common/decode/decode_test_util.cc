#include "common/decode/decode_test_util.h"

#include <blosc.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/test_util.h"

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
