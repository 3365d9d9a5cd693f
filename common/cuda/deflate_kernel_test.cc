// The batched inflate kernel on the GPU against zlib: gzip and zlib streams of every level and of
// the stored, fixed and dynamic block kinds, numcodecs' vectors and the peer fixtures' gzip
// chunks in one launch each; corrupt and truncated streams give errors.
#include "common/cuda/deflate_kernel.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include "common/cuda/cuda_test_util.h"
#include "common/cuda/decode_batch_test_util.h"
#include "common/decode/decode_test_util.h"
#include "common/testing/test_util.h"

namespace zarrd::cuda {
namespace {

using decode::DecodeError;
using decode::testing::Buffer;

testing::BatchResult RunDeflate(const std::vector<Buffer>& inputs,
                                const std::vector<uint64_t>& sizes, DeflateWrapper wrapper) {
  return testing::RunBatch(
      inputs, sizes,
      [wrapper](decode::DecodeTask* d_tasks, const std::vector<decode::DecodeTask>& tasks) {
        const Status s = LaunchDeflateDecode(d_tasks, tasks.size(), wrapper, nullptr);
        EXPECT_TRUE(s.ok()) << s.ToString();
      });
}

TEST(DeflateKernel, DecodesZlibStreamsInOneLaunch) {
  ZARRD_REQUIRE_GPU();
  for (DeflateWrapper wrapper : {DeflateWrapper::kGzip, DeflateWrapper::kZlib}) {
    const int bits = wrapper == DeflateWrapper::kGzip ? 31 : 15;
    std::vector<Buffer> inputs, expected;
    std::vector<uint64_t> sizes;
    for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED, Z_HUFFMAN_ONLY}) {
      for (int level = 0; level <= 9; ++level) {
        for (size_t n : {size_t{0}, size_t{100}, size_t{70001}, size_t{1} << 20}) {
          const Buffer data = decode::testing::Payload(level % 4, n, level);
          inputs.push_back(decode::testing::ZlibDeflate(data, level, strategy, bits));
          expected.push_back(data);
          sizes.push_back(n);
        }
      }
    }
    const char* codec = wrapper == DeflateWrapper::kGzip ? "gzip" : "zlib";
    const auto root = std::filesystem::path(zarrd::testing::FixturesDir()) / "numcodecs" / codec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.path().extension() != ".dat") continue;
      const Buffer c = decode::testing::ReadBytes(e.path().string());
      Buffer out;
      ASSERT_TRUE(decode::testing::ZlibInflate(c, bits, &out));
      inputs.push_back(c);
      expected.push_back(out);
      sizes.push_back(out.size());
    }
    if (wrapper == DeflateWrapper::kGzip) {
      for (const auto& path : decode::testing::FixtureFiles()) {
        const Buffer c = decode::testing::ReadBytes(path);
        Buffer out;
        if (c.size() < 18 || c[0] != 0x1f || c[1] != 0x8b) continue;
        if (!decode::testing::ZlibInflate(c, 31, &out)) continue;
        inputs.push_back(c);
        expected.push_back(out);
        sizes.push_back(out.size());
      }
    }
    const auto r = RunDeflate(inputs, sizes, wrapper);
    for (size_t i = 0; i < inputs.size(); ++i) {
      ASSERT_EQ(r.errors[i], DecodeError::kOk) << codec << " stream " << i;
      EXPECT_EQ(r.outputs[i], expected[i]) << codec << " stream " << i;
    }
    std::cout << inputs.size() << " " << codec << " streams decoded on the GPU\n";
  }
}

TEST(DeflateKernel, CorruptAndTruncatedStreamsGiveErrors) {
  ZARRD_REQUIRE_GPU();
  const Buffer data = decode::testing::Payload(3, 50000, 9);
  const Buffer g = decode::testing::ZlibDeflate(data, 6, Z_DEFAULT_STRATEGY, 31);
  std::vector<Buffer> inputs;
  std::vector<uint64_t> sizes;
  for (size_t cut = 0; cut < g.size(); cut += 1 + g.size() / 100) {
    inputs.push_back(Buffer(g.begin(), g.begin() + cut));
    sizes.push_back(data.size());
  }
  for (size_t k = 0; k < g.size(); k += 1 + g.size() / 100) {
    Buffer bad = g;
    bad[k] ^= 0x08;
    inputs.push_back(bad);
    sizes.push_back(data.size());
  }
  inputs.push_back(g);
  sizes.push_back(data.size() - 1);
  const auto r = RunDeflate(inputs, sizes, DeflateWrapper::kGzip);
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_NE(r.errors[i], DecodeError::kOk) << "stream " << i;
    EXPECT_LE(r.written[i], sizes[i]);
  }
}

}  // namespace
}  // namespace zarrd::cuda
