// Test data for the decoding cores: generated payloads and the peer fixtures' compressed chunks,
// with the reference libraries (libblosc, zlib, libzstd) as the second source of every value.
#pragma once

#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <vector>

#include "common/decode/host_device.h"

namespace zarrd::decode::testing {

using Buffer = std::vector<uint8_t>;

// `n` bytes of kind 0 (smooth float32 values), 1 (small repeating integers), 2 (random bytes:
// incompressible), 3 (runs and random bytes mixed).
Buffer Payload(int kind, size_t n, uint32_t seed);

// libblosc's container of `data` (blosc_compress_ctx); blocksize 0 lets libblosc choose.
Buffer BloscCompress(const Buffer& data, const char* cname, int clevel, int shuffle, int typesize,
                     size_t blocksize);

// libblosc's decoding of a whole container; false when libblosc rejects it.
bool LibBloscDecode(const Buffer& container, Buffer* out);

// zlib's encoding with windowBits 15 (zlib) or 31 (gzip), and its decoding (every gzip member
// for 31; false when zlib rejects the stream or leaves input over).
Buffer ZlibDeflate(const Buffer& data, int level, int strategy, int window_bits,
                   gz_header* header = nullptr);
bool ZlibInflate(const Buffer& in, int window_bits, Buffer* out);

// One compressed split per block of a libblosc container that has one split per block (typesize 1
// or the no-split flag, not memcpyed): (split bytes, the block's original bytes).
struct Split {
  Buffer compressed;
  Buffer original;
};
std::vector<Split> SplitsOf(const Buffer& container, const Buffer& data);

// Runs lane(i) for every i < count on `count` threads at once, as the lanes of one warp, and
// returns their results in lane order. A thread still waiting after 120 s means the lanes
// diverged (some wait at a Sync the others never reach): the process aborts, as such threads
// cannot be joined.
template <class Lane>
auto RunOnThreads(uint32_t count, const Lane& lane) -> std::vector<decltype(lane(0u))> {
  std::vector<std::future<decltype(lane(0u))>> lanes;
  for (uint32_t i = 0; i < count; ++i) lanes.push_back(std::async(std::launch::async, lane, i));
  for (auto& f : lanes) {
    if (f.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
      std::fprintf(stderr, "the lanes diverged: some wait at a Sync the others never reach\n");
      std::fflush(nullptr);
      std::abort();
    }
  }
  std::vector<decltype(lane(0u))> results;
  for (auto& f : lanes) results.push_back(f.get());
  return results;
}

// Every regular file under the peer fixtures' zarrs/ and zarrita/ folders.
std::vector<std::string> FixtureFiles();
Buffer ReadBytes(const std::string& path);

// libzstd's decoding of one zstd frame: the zstd seam until our own decoder is merged.
struct LibZstd {
  DecodeError operator()(const uint8_t* src, uint64_t src_size, uint8_t* dst, uint64_t dst_size,
                         uint64_t* written) const;
};

}  // namespace zarrd::decode::testing
