// The batched blosc kernel on the GPU against libblosc: generated containers of every codec the
// kernel decodes, numcodecs' vectors and the peer fixtures' chunks, decoded in one launch; corrupt
// and truncated containers fail where the host core fails (zstd splits through the host build of
// zstd_decode.h); zstd containers give kUnsupported in a launch without zstd workspaces.
#include "common/cuda/blosc_kernel.h"

#include <blosc.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "common/cuda/cuda_test_util.h"
#include "common/cuda/decode_batch_test_util.h"
#include "common/decode/blosc1.h"
#include "common/decode/decode_test_util.h"
#include "common/decode/zstd_decode.h"
#include "common/testing/test_util.h"

namespace zarrd::cuda {
namespace {

using decode::DecodeError;
using decode::testing::Buffer;

// The host build of the GPU's zstd seam: zstd_decode.h's frame decoder on one lane.
struct HostZstd {
  decode::ZstdWorkspace* ws;
  DecodeError operator()(const uint8_t* src, uint64_t src_size, uint8_t* dst, uint64_t dst_size,
                         uint64_t* written) const {
    return decode::DecodeZstd(src, src_size, dst, dst_size, written, ws);
  }
};

testing::BatchResult RunBlosc(const std::vector<Buffer>& inputs, const std::vector<uint64_t>& sizes,
                              bool zstd = true) {
  return testing::RunBatch(
      inputs, sizes,
      [zstd](decode::DecodeTask* d_tasks, const std::vector<decode::DecodeTask>& tasks) {
        std::vector<uint64_t> offsets;
        const uint64_t scratch_size = BloscScratchLayout(tasks, &offsets);
        uint8_t* scratch = nullptr;
        uint64_t* d_offsets = nullptr;
        ASSERT_EQ(cudaMalloc(&scratch, scratch_size + 1), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&d_offsets, offsets.size() * 8 + 8), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice),
                  cudaSuccess);
        void* workspaces = nullptr;
        if (zstd) {
          ASSERT_EQ(cudaMalloc(&workspaces, BloscZstdWorkspaceBytes()), cudaSuccess);
        }
        const Status s =
            LaunchBloscDecode(d_tasks, tasks.size(), scratch, d_offsets, workspaces, nullptr);
        EXPECT_TRUE(s.ok()) << s.ToString();
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        cudaFree(scratch);
        cudaFree(d_offsets);
        cudaFree(workspaces);
      });
}

TEST(BloscKernel, DecodesLibbloscContainersInOneLaunch) {
  ZARRD_REQUIRE_GPU();
  std::vector<Buffer> inputs, expected;
  std::vector<uint64_t> sizes;
  for (const char* cname : {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}) {
    if (blosc_compname_to_compcode(cname) < 0) continue;
    for (int ts : {1, 2, 3, 4, 8}) {
      for (int shuffle : {0, 1, 2}) {
        for (int clevel : {0, 1, 5, 9}) {
          for (size_t n : {size_t{0}, size_t{33}, size_t{5000}, size_t{1} << 20}) {
            const Buffer data = decode::testing::Payload((ts + clevel) % 4, n, ts * 10 + clevel);
            const size_t blocksize = clevel == 9 ? 1024 : 0;
            inputs.push_back(
                decode::testing::BloscCompress(data, cname, clevel, shuffle, ts, blocksize));
            expected.push_back(data);
            sizes.push_back(n);
          }
        }
      }
    }
  }
  const auto root = std::filesystem::path(zarrd::testing::FixturesDir()) / "numcodecs" / "blosc";
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".dat") continue;
    const Buffer c = decode::testing::ReadBytes(e.path().string());
    Buffer out;
    if (c.size() < 16 || !decode::testing::LibBloscDecode(c, &out)) continue;
    inputs.push_back(c);
    expected.push_back(out);
    sizes.push_back(out.size());
  }
  for (const auto& path : decode::testing::FixtureFiles()) {
    const Buffer c = decode::testing::ReadBytes(path);
    Buffer out;
    if (c.size() < 16 || c[0] != 2) continue;
    const uint32_t cbytes = c[12] | c[13] << 8 | c[14] << 16 | uint32_t{c[15]} << 24;
    if (cbytes != c.size() || !decode::testing::LibBloscDecode(c, &out)) continue;
    inputs.push_back(c);
    expected.push_back(out);
    sizes.push_back(out.size());
  }
  const auto r = RunBlosc(inputs, sizes);
  ASSERT_EQ(r.outputs.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(r.errors[i], DecodeError::kOk) << "container " << i;
    EXPECT_EQ(r.written[i], sizes[i]);
    EXPECT_EQ(r.outputs[i], expected[i]) << "container " << i;
  }
  std::cout << inputs.size() << " containers decoded on the GPU\n";
}

TEST(BloscKernel, CorruptTruncatedAndZstdContainersGiveErrors) {
  ZARRD_REQUIRE_GPU();
  std::vector<Buffer> inputs;
  std::vector<uint64_t> sizes;
  std::vector<DecodeError> host;
  std::vector<Buffer> host_out;
  auto workspace = std::make_unique<decode::ZstdWorkspace>();
  const HostZstd zstd{workspace.get()};
  auto add = [&](const Buffer& c, uint64_t size) {
    Buffer out(size), scratch(size);
    uint64_t written = 0;
    host.push_back(
        decode::DecodeBlosc1(c.data(), c.size(), out.data(), size, scratch.data(), &written, zstd));
    host_out.push_back(out);
    inputs.push_back(c);
    sizes.push_back(size);
  };
  for (const char* cname : {"blosclz", "lz4", "zlib", "zstd"}) {
    for (int shuffle : {0, 1, 2}) {
      const Buffer data = decode::testing::Payload(3, 30000, shuffle);
      const Buffer c = decode::testing::BloscCompress(data, cname, 5, shuffle, 4, 4096);
      for (size_t cut = 0; cut < c.size(); cut += 1 + c.size() / 40) {
        add(Buffer(c.begin(), c.begin() + cut), data.size());
      }
      for (size_t k = 16; k < c.size(); k += 1 + c.size() / 60) {
        Buffer bad = c;
        bad[k] ^= 0x33;
        add(bad, data.size());
      }
      add(c, data.size() + 1);
    }
  }
  const auto r = RunBlosc(inputs, sizes);
  int errors = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Blocks decode in parallel, so of several failing blocks any one may name the error.
    EXPECT_EQ(r.errors[i] == DecodeError::kOk, host[i] == DecodeError::kOk) << "container " << i;
    if (host[i] == DecodeError::kOk) {
      EXPECT_EQ(r.outputs[i], host_out[i]) << "container " << i;
    }
    errors += r.errors[i] != DecodeError::kOk;
  }
  EXPECT_GT(errors, static_cast<int>(inputs.size()) / 2);
  // Without workspaces, zstd splits are refused.
  const Buffer data = decode::testing::Payload(0, 100000, 1);
  const auto refused =
      RunBlosc({decode::testing::BloscCompress(data, "zstd", 5, 1, 4, 0)}, {data.size()}, false);
  EXPECT_EQ(refused.errors[0], DecodeError::kUnsupported);
}

}  // namespace
}  // namespace zarrd::cuda
