// Inflate and its zlib/gzip wrappers against zlib: every level and strategy (stored, fixed and
// dynamic blocks, checked in the streams), gzip header fields and several members, numcodecs'
// vectors, every gzip chunk of the peer fixtures, and corrupt or truncated streams; and the
// cores on threads acting as the lanes of one warp, as the GPU kernel runs them.
#include "common/decode/deflate.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <barrier>
#include <filesystem>
#include <memory>
#include <set>

#include "common/decode/decode_test_util.h"
#include "common/testing/test_util.h"

namespace zarrd::decode {
namespace {

using testing::Buffer;

// Ours, copying from the output and again through windows of deflate's 32 KiB and of the least
// size (where far matches read the output), as the GPU kernel does: all must end alike, with the
// same bytes written.
DecodeError Ours(bool gzip, const Buffer& c, size_t size, Buffer* out) {
  auto ws = std::make_unique<InflateWorkspace>();
  Buffer window_bytes(32768);
  out->assign(size, 0xcd);
  uint64_t written = 0;
  const auto decode = [&](Buffer* dst, uint64_t* n, InflateWindow w) {
    return gzip ? DecodeGzip(c.data(), c.size(), dst->data(), size, n, ws.get(), SerialLanes(), w)
                : DecodeZlib(c.data(), c.size(), dst->data(), size, n, ws.get(), SerialLanes(), w);
  };
  const DecodeError e = decode(out, &written, {});
  for (uint32_t window_size : {32768u, InflateWindow::kMinBytes}) {
    Buffer through_window(size, 0xcd);
    uint64_t window_written = 0;
    EXPECT_EQ(decode(&through_window, &window_written, {window_bytes.data(), window_size}), e);
    EXPECT_EQ(window_written, written);
    EXPECT_TRUE(through_window == *out) << "a window of " << window_size << " wrote other bytes";
  }
  EXPECT_LE(written, size);
  return e;
}

DecodeError OursZlib(const Buffer& c, size_t size, Buffer* out) {
  return Ours(false, c, size, out);
}
DecodeError OursGzip(const Buffer& c, size_t size, Buffer* out) { return Ours(true, c, size, out); }

TEST(Deflate, EveryLevelAndStrategyCoversAllBlockTypes) {
  std::set<int> first_block_types;
  int cases = 0;
  for (int strategy : {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED}) {
    for (int level = 0; level <= 9; ++level) {
      for (int kind = 0; kind < 4; ++kind) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{300}, size_t{70001}, size_t{300000}}) {
          SCOPED_TRACE(::testing::Message() << "strategy " << strategy << " level " << level
                                            << " kind " << kind << " size " << n);
          const Buffer data = testing::Payload(kind, n, level * 10 + kind);
          const Buffer z = testing::ZlibDeflate(data, level, strategy, 15);
          first_block_types.insert((z[2] >> 1) & 3);
          Buffer expected, out;
          ASSERT_TRUE(testing::ZlibInflate(z, 15, &expected));
          ASSERT_EQ(expected, data);
          ASSERT_EQ(OursZlib(z, n, &out), DecodeError::kOk);
          ASSERT_EQ(out, data);
          const Buffer g = testing::ZlibDeflate(data, level, strategy, 31);
          ASSERT_EQ(OursGzip(g, n, &out), DecodeError::kOk);
          ASSERT_EQ(out, data);
          ++cases;
        }
      }
    }
  }
  std::cout << cases << " streams\n";
  EXPECT_EQ(first_block_types, (std::set<int>{0, 1, 2})) << "stored, fixed and dynamic blocks";
}

// A block of noise repeated at distances past the least window (up to zlib's longest): the
// window's far matches read the output the lanes flushed. A window of another size is refused.
TEST(Deflate, MatchesPastTheWindowReadTheOutput) {
  for (size_t distance : {size_t{InflateWindow::kMinBytes} + 1, size_t{20000}, size_t{32000}}) {
    const Buffer noise = testing::Payload(2, distance, 7);  // incompressible by itself
    Buffer data = noise;
    data.insert(data.end(), noise.begin(), noise.end());
    data.insert(data.end(), noise.begin(), noise.begin() + 5000);
    const Buffer z = testing::ZlibDeflate(data, 9, Z_DEFAULT_STRATEGY, 15);
    ASSERT_LT(z.size(), distance + distance / 4) << "zlib found no far matches";
    Buffer out;
    ASSERT_EQ(OursZlib(z, data.size(), &out), DecodeError::kOk);
    EXPECT_EQ(out, data);
  }
  auto ws = std::make_unique<InflateWorkspace>();
  Buffer window(32768), out(10);
  const Buffer z = testing::ZlibDeflate(Buffer(10, 1), 6, Z_DEFAULT_STRATEGY, 15);
  uint64_t written = 0;
  for (uint32_t size : {4096u, 12288u}) {
    EXPECT_EQ(DecodeZlib(z.data(), z.size(), out.data(), 10, &written, ws.get(), SerialLanes(),
                         {window.data(), size}),
              DecodeError::kUnsupported)
        << size;
  }
}

TEST(Deflate, GzipHeaderFieldsAndSeveralMembers) {
  const Buffer a = testing::Payload(0, 5000, 1), b = testing::Payload(3, 7000, 2);
  char name[] = "chunk.0.0", comment[] = "from zlib";
  Bytef extra[] = {'z', 'r', 3, 0, 1, 2, 3};
  gz_header header{};
  header.name = reinterpret_cast<Bytef*>(name);
  header.comment = reinterpret_cast<Bytef*>(comment);
  header.extra = extra;
  header.extra_len = sizeof extra;
  header.hcrc = 1;
  Buffer both = testing::ZlibDeflate(a, 6, Z_DEFAULT_STRATEGY, 31, &header);
  const Buffer second = testing::ZlibDeflate(b, 1, Z_DEFAULT_STRATEGY, 31);
  both.insert(both.end(), second.begin(), second.end());
  Buffer expected, out;
  ASSERT_TRUE(testing::ZlibInflate(both, 31, &expected));
  Buffer ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  ASSERT_EQ(expected, ab);
  ASSERT_EQ(OursGzip(both, ab.size(), &out), DecodeError::kOk);
  EXPECT_EQ(out, ab);
  Buffer bad = both;
  bad[14] ^= 1;  // inside the header, covered by its CRC
  EXPECT_EQ(OursGzip(bad, ab.size(), &out), DecodeError::kChecksum);
}

void NumcodecsVectors(const char* codec, int window_bits) {
  const auto root = std::filesystem::path(zarrd::testing::FixturesDir()) / "numcodecs" / codec;
  int decoded = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".dat") continue;
    SCOPED_TRACE(e.path().string());
    const Buffer c = testing::ReadBytes(e.path().string());
    Buffer expected, out;
    ASSERT_TRUE(testing::ZlibInflate(c, window_bits, &expected));
    const DecodeError err =
        window_bits > 15 ? OursGzip(c, expected.size(), &out) : OursZlib(c, expected.size(), &out);
    ASSERT_EQ(err, DecodeError::kOk);
    EXPECT_EQ(out, expected);
    ++decoded;
  }
  std::cout << decoded << " numcodecs " << codec << " vectors\n";
  EXPECT_GT(decoded, 50);
}

TEST(Deflate, NumcodecsGzipVectors) { NumcodecsVectors("gzip", 31); }
TEST(Deflate, NumcodecsZlibVectors) { NumcodecsVectors("zlib", 15); }

TEST(Deflate, EveryGzipChunkOfThePeerFixtures) {
  int decoded = 0;
  for (const auto& path : testing::FixtureFiles()) {
    const Buffer c = testing::ReadBytes(path);
    Buffer expected, out;
    if (c.size() < 18 || c[0] != 0x1f || c[1] != 0x8b || !testing::ZlibInflate(c, 31, &expected))
      continue;
    SCOPED_TRACE(path);
    ASSERT_EQ(OursGzip(c, expected.size(), &out), DecodeError::kOk);
    EXPECT_EQ(out, expected);
    ++decoded;
  }
  std::cout << decoded << " gzip chunks of the peer fixtures\n";
  EXPECT_GT(decoded, 10);
}

TEST(Deflate, TruncatedAndCorruptStreamsFailCleanly) {
  for (int level : {0, 1, 6, 9}) {
    for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED}) {
      const Buffer data = testing::Payload(3, 30000, level);
      const Buffer z = testing::ZlibDeflate(data, level, strategy, 15);
      const Buffer g = testing::ZlibDeflate(data, level, strategy, 31);
      Buffer out, expected;
      for (size_t cut = 0; cut < z.size(); cut += 1 + z.size() / 300) {
        EXPECT_NE(OursZlib(Buffer(z.begin(), z.begin() + cut), data.size(), &out),
                  DecodeError::kOk);
        EXPECT_NE(OursGzip(Buffer(g.begin(), g.begin() + cut), data.size(), &out),
                  DecodeError::kOk);
      }
      for (size_t k = 0; k < z.size(); k += 1 + z.size() / 500) {
        Buffer bad = z;
        bad[k] ^= 0x10;
        // Where ours accepts, zlib accepts and agrees (a checksum makes both unlikely).
        if (OursZlib(bad, data.size(), &out) == DecodeError::kOk) {
          ASSERT_TRUE(testing::ZlibInflate(bad, 15, &expected));
          EXPECT_EQ(out, expected);
        }
      }
    }
  }
  const Buffer data = testing::Payload(1, 1000, 0);
  const Buffer z = testing::ZlibDeflate(data, 6, Z_DEFAULT_STRATEGY, 15);
  Buffer out;
  EXPECT_EQ(OursZlib(z, 999, &out), DecodeError::kOutputOverrun);
  EXPECT_EQ(OursZlib(z, 1001, &out), DecodeError::kOutputShort);
  Buffer bad = z;
  bad[bad.size() - 1] ^= 1;
  EXPECT_EQ(OursZlib(bad, 1000, &out), DecodeError::kChecksum);
  bad = z;
  bad.push_back(0);
  EXPECT_EQ(OursZlib(bad, 1000, &out), DecodeError::kCorrupt);
  // A stored block whose length and its complement disagree.
  const Buffer stored = {0x78, 0x01, 0x01, 0x05, 0x00, 0xfa, 0xfe, 'h', 'e', 'l', 'l', 'o'};
  EXPECT_EQ(OursZlib(stored, 5, &out), DecodeError::kCorrupt);
}

// Threads acting as the lanes of one warp (lanes.h): a barrier for Sync, a shared slot for
// Broadcast and the reductions. Every lane must reach the same Syncs, or the threads hang (a
// watchdog fails the test).
struct Warp {
  explicit Warp(uint32_t n) : barrier(n), values(n) {}
  std::barrier<> barrier;
  std::vector<uint32_t> values;
};

struct ThreadLanes {
  uint32_t l = 0;
  uint32_t n = 1;
  Warp* warp = nullptr;

  uint32_t lane() const { return l; }
  uint32_t count() const { return n; }
  void Sync() const { warp->barrier.arrive_and_wait(); }
  uint32_t Broadcast(uint32_t v) const { return Gather(v)[0]; }
  uint32_t Xor(uint32_t v) const {
    uint32_t r = 0;
    for (uint32_t x : Gather(v)) r ^= x;
    return r;
  }
  uint32_t Sum(uint32_t v) const {
    uint32_t r = 0;
    for (uint32_t x : Gather(v)) r += x;
    return r;
  }
  // Every lane's v, once all lanes have given theirs (a copy: the next gather reuses the slots).
  std::vector<uint32_t> Gather(uint32_t v) const {
    Sync();  // the previous gather's readers are done
    warp->values[l] = v;
    Sync();
    return warp->values;
  }
};

// DecodeGzip (or DecodeZlib) on `count` threads as lanes sharing one output and workspace; every
// lane must return the same error and count.
DecodeError WithLanes(bool gzip, const Buffer& c, size_t size, uint32_t count, Buffer* out,
                      uint64_t* written, bool window = false) {
  out->assign(size, 0xcd);
  auto ws = std::make_unique<InflateWorkspace>();
  Buffer window_bytes(InflateWindow::kMinBytes);
  const InflateWindow w =
      window ? InflateWindow{window_bytes.data(), InflateWindow::kMinBytes} : InflateWindow{};
  Warp warp(count);
  const auto results = testing::RunOnThreads(count, [&](uint32_t lane) {
    const ThreadLanes l{lane, count, &warp};
    uint64_t n = 0;
    const DecodeError e =
        gzip ? DecodeGzip(c.data(), c.size(), out->data(), size, &n, ws.get(), l, w)
             : DecodeZlib(c.data(), c.size(), out->data(), size, &n, ws.get(), l, w);
    warp.barrier.arrive_and_drop();
    return std::make_pair(e, n);
  });
  for (uint32_t lane = 1; lane < count; ++lane) {
    EXPECT_EQ(results[lane].first, results[0].first) << "lane " << lane;
    EXPECT_EQ(results[lane].second, results[0].second) << "lane " << lane;
  }
  *written = results[0].second;
  return results[0].first;
}

TEST(DeflateLanes, ManyLanesDecodeLikeZlib) {
  int streams = 0;
  // The threads meet at every match, so 32 lanes take the smaller streams.
  const std::pair<uint32_t, std::vector<size_t>> runs[] = {{3, {0, 2, 70001}}, {32, {1, 6000}}};
  for (const auto& [count, sizes] : runs) {
    for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED}) {
      for (int level : {0, 6}) {
        for (int kind = 0; kind < 4; ++kind) {
          for (size_t n : sizes) {
            SCOPED_TRACE(::testing::Message()
                         << count << " lanes, strategy " << strategy << " level " << level
                         << " kind " << kind << " size " << n);
            const Buffer data = testing::Payload(kind, n, level * 7 + kind);
            Buffer out;
            uint64_t written = 0;
            const Buffer g = testing::ZlibDeflate(data, level, strategy, 31);
            const bool window = count == 32;  // as the kernel runs; 3 lanes copy from the output
            ASSERT_EQ(WithLanes(true, g, n, count, &out, &written, window), DecodeError::kOk);
            ASSERT_EQ(out, data);
            const Buffer z = testing::ZlibDeflate(data, level, strategy, 15);
            ASSERT_EQ(WithLanes(false, z, n, count, &out, &written, window), DecodeError::kOk);
            ASSERT_EQ(out, data);
            streams += 2;
          }
        }
      }
    }
  }
  std::cout << streams << " streams on lanes\n";
}

TEST(DeflateLanes, SeveralMembersAndDamagedStreamsEndAsOnOneLane) {
  const Buffer a = testing::Payload(2, 33333, 4), b = testing::Payload(0, 7000, 5);
  Buffer both = testing::ZlibDeflate(a, 5, Z_DEFAULT_STRATEGY, 31);
  const Buffer second = testing::ZlibDeflate(b, 0, Z_DEFAULT_STRATEGY, 31);
  both.insert(both.end(), second.begin(), second.end());
  Buffer ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  Buffer out, one;
  uint64_t written = 0;
  for (bool window : {false, true}) {
    ASSERT_EQ(WithLanes(true, both, ab.size(), 32, &out, &written, window), DecodeError::kOk);
    EXPECT_EQ(out, ab);
  }
  // Damaged and cut streams: the lanes end with the one-lane decode's error and byte count, and
  // where they accept, zlib agrees.
  const Buffer z = testing::ZlibDeflate(a, 6, Z_DEFAULT_STRATEGY, 15);
  int damaged = 0;
  for (size_t k = 0; k < both.size(); k += 1 + both.size() / 30) {
    for (bool gzip : {true, false}) {
      Buffer bad = gzip ? both : z;
      const size_t size = gzip ? ab.size() : a.size();
      if (k >= bad.size()) continue;
      bad[k] ^= 0x24;
      const Buffer cut(bad.begin(), bad.begin() + (k * 7) % bad.size());
      for (const Buffer* input : std::array<const Buffer*, 2>{&bad, &cut}) {
        one.assign(size, 0xcd);
        uint64_t one_written = 0;
        auto ws = std::make_unique<InflateWorkspace>();
        const DecodeError want = gzip ? DecodeGzip(input->data(), input->size(), one.data(), size,
                                                   &one_written, ws.get())
                                      : DecodeZlib(input->data(), input->size(), one.data(), size,
                                                   &one_written, ws.get());
        EXPECT_EQ(WithLanes(gzip, *input, size, 8, &out, &written, k % 2 == 0), want) << k;
        EXPECT_EQ(written, one_written) << k;
        EXPECT_EQ(out, one) << k;
        damaged += want != DecodeError::kOk;
      }
    }
  }
  std::cout << damaged << " damaged streams\n";
  EXPECT_GT(damaged, 50);
}

TEST(DeflateLanes, ChecksumsSplitByLaneEqualZlibs) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{5553}, size_t{100003}}) {
    const Buffer data = testing::Payload(3, n, static_cast<int>(n));
    const uint32_t crc = static_cast<uint32_t>(crc32(0, data.data(), static_cast<uInt>(n)));
    const uint32_t adler = static_cast<uint32_t>(adler32(1, data.data(), static_cast<uInt>(n)));
    EXPECT_EQ(Crc32(data.data(), n), crc) << n;
    EXPECT_EQ(LaneCrc32(SerialLanes(), data.data(), n), crc) << n;
    EXPECT_EQ(LaneAdler32(SerialLanes(), data.data(), n), adler) << n;
    for (uint32_t count : {2u, 7u, 32u}) {
      Warp warp(count);
      const auto results = testing::RunOnThreads(count, [&](uint32_t lane) {
        const ThreadLanes l{lane, count, &warp};
        return std::make_pair(LaneCrc32(l, data.data(), n), LaneAdler32(l, data.data(), n));
      });
      for (const auto& r : results) {
        EXPECT_EQ(r.first, crc) << n << " bytes on " << count << " lanes";
        EXPECT_EQ(r.second, adler) << n << " bytes on " << count << " lanes";
      }
    }
  }
}

}  // namespace
}  // namespace zarrd::decode
