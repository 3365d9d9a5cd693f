#include "common/cuda/device_source.h"

#include <gtest/gtest.h>

#include <numeric>

#include "common/array/array.h"
#include "common/cuda/cuda_test_util.h"
#include "common/testing/test_util.h"

namespace zarrd::cuda {
namespace {

using zarrd::testing::Pattern;
using zarrd::testing::Reference;

// Writes from GPU memory land where numpy's `a[selection] = input` puts them: the expected
// array is built on the host from the selection's flat indices (Reference over an arange).
TEST(DeviceSource, WritesFromGpuMemoryMatchNumpyAssignment) {
  ZARRD_REQUIRE_GPU();
  const std::vector<int64_t> shape = {37, 29, 6};
  const int64_t total = 37 * 29 * 6;
  std::vector<int32_t> flat(total);
  std::iota(flat.begin(), flat.end(), 0);
  StagingPool staging(0, 4);
  for (const char* codecs : {R"([{"name":"bytes","configuration":{"endian":"little"}},
                                 {"name":"zstd","configuration":{"level":1}}])",
                             R"([{"name":"transpose","configuration":{"order":[2,0,1]}},
                                 {"name":"bytes","configuration":{"endian":"big"}}])"}) {
    for (const char* text :
         {"", "3:30, ::-2, 1:5", "::-3, 7, :", "36, 28, 5", "10:20, 0:29, ::5", "5:5"}) {
      SCOPED_TRACE(std::string(text) + " " + codecs);
      ArrayMetadata m;
      m.format = ZarrFormat::kV3;
      m.shape = shape;
      m.chunk_shape = {8, 7, 4};
      m.dtype = DataType::kInt32;
      m.fill_value = FillValue(4, 0);
      m.codecs = nlohmann::json::parse(codecs);
      auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "a", m);
      const auto sel = *ResolveSelection(*ParseSelection(text), shape);
      const auto positions = Reference(flat, shape, sel);
      const auto input = Pattern(static_cast<int64_t>(positions.size()));
      std::vector<int32_t> expected(total, 0);
      for (size_t k = 0; k < positions.size(); ++k) expected[positions[k]] = input[k];

      uint8_t* device = nullptr;
      const size_t nbytes = input.size() * 4;
      ASSERT_EQ(cudaMalloc(&device, std::max<size_t>(nbytes, 4)), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(device, input.data(), nbytes, cudaMemcpyHostToDevice), cudaSuccess);
      DeviceSource source(staging, device, nbytes, 4);
      Status s = array->WriteFromSource(sel, source);
      ASSERT_TRUE(s.ok()) << s.ToString();
      std::vector<int32_t> got(total, -1);
      ASSERT_TRUE(array->Read({}, got.data(), got.size() * 4).ok());
      EXPECT_EQ(got, expected);

      DeviceSource short_source(staging, device, nbytes + 4, 4);
      EXPECT_EQ(array->WriteFromSource(sel, short_source).code(), StatusCode::kInvalidArgument);
      cudaFree(device);
    }
  }
}

}  // namespace
}  // namespace zarrd::cuda
