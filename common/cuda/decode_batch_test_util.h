// Runs a batch of decode tasks on the GPU for the kernel tests: uploads the inputs into one
// buffer, builds device DecodeTasks, launches, and brings outputs, errors and sizes back.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "common/decode/host_device.h"

namespace zarrd::cuda::testing {

struct BatchResult {
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<decode::DecodeError> errors;
  std::vector<uint64_t> written;
};

// `launch` gets the device tasks and the host copies of them.
using Launch = std::function<void(decode::DecodeTask* d_tasks,
                                  const std::vector<decode::DecodeTask>& host_tasks)>;

inline BatchResult RunBatch(const std::vector<std::vector<uint8_t>>& inputs,
                            const std::vector<uint64_t>& sizes, const Launch& launch) {
  uint64_t in_total = 0, out_total = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_total += inputs[i].size() + 16;
    out_total += sizes[i] + 16;
  }
  uint8_t *d_in = nullptr, *d_out = nullptr;
  decode::DecodeTask* d_tasks = nullptr;
  EXPECT_EQ(cudaMalloc(&d_in, in_total + 1), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_out, out_total + 1), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_tasks, sizeof(decode::DecodeTask) * (inputs.size() + 1)), cudaSuccess);
  std::vector<decode::DecodeTask> tasks(inputs.size());
  uint64_t in_at = 0, out_at = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(cudaMemcpy(d_in + in_at, inputs[i].data(), inputs[i].size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    tasks[i].src = d_in + in_at;
    tasks[i].src_size = inputs[i].size();
    tasks[i].dst = d_out + out_at;
    tasks[i].dst_size = sizes[i];
    tasks[i].error = decode::DecodeError::kUnsupported;  // the kernel must overwrite it
    in_at += inputs[i].size() + 16;
    out_at += sizes[i] + 16;
  }
  EXPECT_EQ(cudaMemset(d_out, 0xcd, out_total + 1), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d_tasks, tasks.data(), sizeof(decode::DecodeTask) * tasks.size(),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  launch(d_tasks, tasks);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<decode::DecodeTask> done(tasks.size());
  EXPECT_EQ(cudaMemcpy(done.data(), d_tasks, sizeof(decode::DecodeTask) * done.size(),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  BatchResult r;
  for (size_t i = 0; i < tasks.size(); ++i) {
    std::vector<uint8_t> out(sizes[i]);
    EXPECT_EQ(cudaMemcpy(out.data(), tasks[i].dst, sizes[i], cudaMemcpyDeviceToHost), cudaSuccess);
    r.outputs.push_back(std::move(out));
    r.errors.push_back(done[i].error);
    r.written.push_back(done[i].written);
  }
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_tasks);
  return r;
}

}  // namespace zarrd::cuda::testing
