// The zstd kernels on the GPU against libzstd: the numcodecs vectors, the fixtures' zstd chunks
// and generated frames (of many blocks: treeless literals and repeated FSE tables across blocks)
// decode to libzstd's bytes in one batched launch, twice on the same scratch, and damaged frames
// give the same error as the host build of the same block-parallel core (which decode_tests
// checks against libzstd); frames of more blocks than the split holds decode whole; too small a
// scratch gives kUnsupported.
#include "common/cuda/zstd_kernel.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "common/cuda/cuda_test_util.h"
#include "common/decode/zstd_test_util.h"
#include "common/testing/test_util.h"

namespace zarrd::cuda {
namespace {

using decode::DecodeError;
using decode::DecodeTask;
using decode::testing::Buffer;

struct Job {
  std::string name;
  Buffer frames;
  size_t dst_size = 0;
  DecodeError want = DecodeError::kOk;
  Buffer want_bytes;  // when want is kOk
};

std::vector<Job> Jobs() {
  std::vector<Job> jobs;
  auto add_valid = [&](const std::string& name, Buffer frames) {
    Buffer lib;
    ASSERT_TRUE(decode::testing::LibDecompress(frames.data(), frames.size(), 64 << 20, &lib))
        << name;
    jobs.push_back({name, std::move(frames), lib.size(), DecodeError::kOk, lib});
  };
  const std::filesystem::path fixtures(zarrd::testing::FixturesDir());
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(fixtures / "numcodecs" / "zstd")) {
    if (entry.path().extension() != ".dat") continue;
    Bytes b;
    EXPECT_TRUE(zarrd::testing::ReadFile(entry.path().string(), &b));
    add_valid(entry.path().string(), b);
  }
  for (const char* peer : {"zarrs", "zarrita"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(fixtures / peer)) {
      if (!entry.is_regular_file()) continue;
      Bytes b;
      EXPECT_TRUE(zarrd::testing::ReadFile(entry.path().string(), &b));
      if (b.size() >= 4 && decode::zstd::ReadLE32(b.data()) == decode::zstd::kMagic) {
        add_valid(entry.path().string(), b);
      }
    }
  }
  uint32_t seed = 1;
  for (decode::testing::DataKind kind : decode::testing::kAllKinds) {
    for (size_t size : {size_t(0), size_t(100), size_t(70000), size_t(1) << 20}) {
      for (int level : {-5, 3, 19}) {
        decode::testing::CompressOptions o;
        o.level = level;
        o.checksum = seed % 2;
        o.content_size = seed % 3 != 0;
        const Buffer data = decode::testing::MakeData(kind, size, seed++);
        add_valid(std::string(DataKindName(kind)) + " " + std::to_string(size) + " level " +
                      std::to_string(level),
                  decode::testing::LibCompress(data, o));
      }
    }
  }
  // Frames of more blocks than the split holds, which the kernels decode whole.
  for (uint32_t n : {100u, 5000u}) {
    add_valid(std::to_string(n) + " blocks of 1 byte",
              decode::testing::OneByteBlocks(
                  decode::testing::MakeData(decode::testing::DataKind::kText, n, n)));
  }
  // Damaged copies of some generated frames: the host build's answer is the reference (the
  // frame decoder's where the block-parallel core's split cannot hold the frame).
  std::mt19937 rng(3);
  const size_t valid = jobs.size();
  for (size_t i = 0; i < valid; i += 3) {
    Job bad = jobs[i];
    if (bad.frames.empty()) continue;
    bad.name += " damaged";
    if (rng() % 4 == 0) {
      bad.frames.resize(bad.frames.size() * (rng() % 100) / 100);
    } else {
      for (int k = 0; k < 3; ++k)
        bad.frames[rng() % bad.frames.size()] ^= uint8_t(1 << (rng() % 8));
    }
    if (rng() % 5 == 0) bad.dst_size += 1 + rng() % 100;
    Buffer host;
    bad.want = decode::testing::OurDecompress(bad.frames.data(), bad.frames.size(), bad.dst_size,
                                              &host, decode::testing::ZstdCore::kBlocks);
    if (bad.want == DecodeError::kUnsupported) {
      bad.want =
          decode::testing::OurDecompress(bad.frames.data(), bad.frames.size(), bad.dst_size, &host);
    }
    bad.want_bytes = host;
    jobs.push_back(std::move(bad));
  }
  return jobs;
}

TEST(ZstdKernel, DecodesLikeLibzstdAndFailsLikeTheHostBuild) {
  ZARRD_REQUIRE_GPU();
  const std::vector<Job> jobs = Jobs();
  ASSERT_GT(jobs.size(), 200u);
  size_t src_total = 0, dst_total = 0;
  for (const Job& j : jobs) {
    src_total += j.frames.size() + 16;
    dst_total += j.dst_size + 16;
  }
  uint8_t *src = nullptr, *dst = nullptr;
  DecodeTask* tasks = nullptr;
  ASSERT_EQ(cudaMalloc(&src, src_total), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dst, dst_total), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&tasks, jobs.size() * sizeof(DecodeTask)), cudaSuccess);
  std::vector<DecodeTask> host_tasks(jobs.size());
  size_t s = 0, d = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_EQ(
        cudaMemcpy(src + s, jobs[i].frames.data(), jobs[i].frames.size(), cudaMemcpyHostToDevice),
        cudaSuccess);
    host_tasks[i].src = src + s;
    host_tasks[i].src_size = jobs[i].frames.size();
    host_tasks[i].dst = dst + d;
    host_tasks[i].dst_size = jobs[i].dst_size;
    host_tasks[i].error = DecodeError::kUnsupported;  // overwritten by the kernel
    s += jobs[i].frames.size() + 16;
    d += jobs[i].dst_size + 16;
  }
  ASSERT_EQ(cudaMemcpy(tasks, host_tasks.data(), jobs.size() * sizeof(DecodeTask),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  auto ws = AllocateZstdScratch(ZstdScratchBytes(jobs.size(), d));
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  for (int launch = 0; launch < 2; ++launch) {  // the second reuses the scratch as it is left
    ASSERT_TRUE(LaunchZstdDecode(tasks, int(jobs.size()), *ws, nullptr).ok());
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto done = testing::ToHost<DecodeTask>(tasks, jobs.size());
  int checked_errors = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    ASSERT_EQ(done[i].error, j.want) << j.name << ": " << decode::DecodeErrorName(done[i].error);
    if (j.want != DecodeError::kOk) {
      ++checked_errors;
      continue;
    }
    EXPECT_EQ(done[i].written, j.dst_size) << j.name;
    const auto bytes = testing::ToHost<uint8_t>(host_tasks[i].dst, j.dst_size);
    ASSERT_TRUE(std::equal(bytes.begin(), bytes.end(), j.want_bytes.begin())) << j.name;
  }
  EXPECT_GT(checked_errors, 20);

  ZstdScratch small = *ws;
  small.bytes = ZstdScratchBytes(jobs.size(), d) / 2;
  ASSERT_TRUE(LaunchZstdDecode(tasks, int(jobs.size()), small, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (const DecodeTask& t : testing::ToHost<DecodeTask>(tasks, jobs.size())) {
    ASSERT_EQ(t.error, DecodeError::kUnsupported);
  }
  FreeZstdScratch(*ws);
  cudaFree(tasks);
  cudaFree(dst);
  cudaFree(src);
}

}  // namespace
}  // namespace zarrd::cuda
