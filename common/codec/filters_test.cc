// numcodecs' filters (delta, fixedscaleoffset, quantize, bitround, astype, shuffle) against
// numcodecs' own output: tests/data/peers/numcodecs/<filter>/ (made by make_filter_vectors.py
// there) holds inputs, configurations, numcodecs' encodings and numcodecs' decodings of those.
// Lossy filters are held to numcodecs' bytes, not to their input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/codec/codec.h"
#include "common/codec/registry.h"
#include "common/metadata/metadata.h"
#include "common/testing/test_util.h"

namespace zarrd {
namespace {

using nlohmann::json;
using testing::FixturesDir;
using testing::LoadNpy;
using testing::NpyArray;
using testing::ReadFile;

class NumcodecsFilterVectors : public ::testing::TestWithParam<std::string> {};

// Elements of `dtype` in `got` and `want` that differ, as "index: got != want" lines; NaNs of any
// payload are equal when both are NaN.
std::string Differences(const Bytes& got, const Bytes& want, size_t item) {
  if (got.size() != want.size()) {
    return "sizes " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  }
  std::string out;
  for (size_t i = 0; i < got.size(); i += item) {
    if (std::memcmp(&got[i], &want[i], item) == 0) continue;
    out += " [" + std::to_string(i / item) + "]";
  }
  return out;
}

TEST_P(NumcodecsFilterVectors, EncodeAndDecodeAsNumcodecs) {
  const std::filesystem::path root =
      std::filesystem::path(FixturesDir()) / "numcodecs" / GetParam();
  int checked = 0;
  for (int c = 0; c < 100; ++c) {
    char name[32];
    std::snprintf(name, sizeof name, "codec.%02d", c);
    const auto dir = root / name;
    if (!std::filesystem::exists(dir)) break;
    std::ifstream config_file(dir / "config.json");
    const json config = json::parse(config_file);
    for (int a = 0; a < 100; ++a) {
      char arr[32], enc[32], dec[32];
      std::snprintf(arr, sizeof arr, "array.%02d.npy", a);
      std::snprintf(enc, sizeof enc, "encoded.%02d.dat", a);
      std::snprintf(dec, sizeof dec, "decoded.%02d.dat", a);
      if (!std::filesystem::exists(root / arr)) break;
      if (!std::filesystem::exists(dir / enc)) continue;
      SCOPED_TRACE((dir / enc).string() + " " + config.dump());
      NpyArray npy;
      ASSERT_TRUE(LoadNpy((root / arr).string(), &npy));
      Bytes want_encoded, want_decoded;
      ASSERT_TRUE(ReadFile((dir / enc).string(), &want_encoded));
      ASSERT_TRUE(ReadFile((dir / dec).string(), &want_decoded));
      auto dtype = ParseV2DataType(npy.descr);
      ASSERT_TRUE(dtype.ok()) << npy.descr;
      const ChunkSpec spec{dtype->dtype, npy.shape, FillValue(ItemSize(dtype->dtype), 0)};
      auto codec = CodecRegistry::Builtin().MakeV2Filter(config, spec);
      ASSERT_TRUE(codec.ok()) << codec.status().ToString();
      if (auto* a2a = std::get_if<std::unique_ptr<ArrayToArrayCodec>>(&*codec)) {
        const ChunkSpec encoded_spec = (*a2a)->EncodedSpec(spec);
        Bytes encoded(encoded_spec.num_bytes());
        (*a2a)->Encode(spec, npy.data.data(), encoded.data());
        const size_t item = ItemSize(encoded_spec.dtype);
        EXPECT_EQ(encoded, want_encoded) << Differences(encoded, want_encoded, item);
        Bytes decoded(want_decoded.size());
        ASSERT_EQ(spec.num_bytes(), want_decoded.size());
        (*a2a)->Decode(spec, want_encoded.data(), decoded.data());
        EXPECT_EQ(decoded, want_decoded)
            << Differences(decoded, want_decoded, spec.num_bytes() / npy.data.size());
      } else {
        auto& b2b = std::get<std::unique_ptr<BytesToBytesCodec>>(*codec);
        Bytes encoded, decoded(want_decoded.size());
        ASSERT_TRUE(b2b->Encode(npy.data, &encoded).ok());
        EXPECT_EQ(encoded, want_encoded);
        ASSERT_TRUE(b2b->DecodeInto(want_encoded, decoded).ok());
        EXPECT_EQ(decoded, want_decoded);
      }
      ++checked;
    }
  }
  std::cout << GetParam() << ": " << checked << " numcodecs vectors checked\n";
  EXPECT_GT(checked, 3);
}

INSTANTIATE_TEST_SUITE_P(Filters, NumcodecsFilterVectors,
                         ::testing::Values("delta", "fixedscaleoffset", "quantize", "bitround",
                                           "astype", "shuffle"));

// zarr 2's order: F-order transpose, then array filters, bytes, bytes filters, compressor. The
// bytes below are numcodecs': Delta('<i4', astype='<i2') then Shuffle(2) of
// np.array([[1, 5], [2, 9]], '<i4') in F memory order (1, 2, 5, 9):
//   Shuffle(2).encode(Delta('<i4', '<i2').encode(np.array([1, 2, 5, 9], '<i4')))
//   -> 01 01 03 04 00 00 00 00
TEST(FilterChain, ZarrV2OrderAndTypeChange) {
  ArrayMetadata m;
  m.format = ZarrFormat::kV2;
  m.shape = {2, 2};
  m.chunk_shape = {2, 2};
  m.dtype = DataType::kInt32;
  m.fill_value = FillValue(4, 0);
  m.v2_order = 'F';
  m.v2_filters = json::parse(
      R"([{"id":"delta","dtype":"<i4","astype":"<i2"},{"id":"shuffle","elementsize":2}])");
  m.codecs = json();
  ASSERT_TRUE(m.Finalize().ok());
  const int32_t values[4] = {1, 5, 2, 9};
  Bytes encoded;
  ASSERT_TRUE(
      m.codec_chain->Encode(m.chunk_spec(), reinterpret_cast<const uint8_t*>(values), &encoded)
          .ok());
  EXPECT_EQ(encoded, (Bytes{1, 1, 3, 4, 0, 0, 0, 0}));
  int32_t back[4];
  ASSERT_TRUE(
      m.codec_chain->Decode(m.chunk_spec(), encoded, reinterpret_cast<uint8_t*>(back)).ok());
  EXPECT_EQ(std::vector<int32_t>(back, back + 4), std::vector<int32_t>(values, values + 4));
  EXPECT_EQ(m.codec_chain->EncodedSize(m.chunk_spec()), 8u);
  EXPECT_EQ(ToV2Json(m)["filters"], m.v2_filters);
}

// numcodecs' AsType('<f8', '|u1') stores 8 bytes an element: the stored-size bound allows it.
TEST(FilterChain, WideningAsTypeFitsTheStoredSizeBound) {
  ArrayMetadata m;
  m.format = ZarrFormat::kV2;
  m.shape = {1 << 20};
  m.chunk_shape = {1 << 20};
  m.dtype = DataType::kUint8;
  m.fill_value = FillValue(1, 0);
  m.v2_filters = json::parse(R"([{"id":"astype","encode_dtype":"<f8","decode_dtype":"|u1"}])");
  m.codecs = json();
  ASSERT_TRUE(m.Finalize().ok());
  Bytes values(1 << 20), encoded;
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i * 2654435761u >> 7);
  ASSERT_TRUE(m.codec_chain->Encode(m.chunk_spec(), values.data(), &encoded).ok());
  EXPECT_EQ(m.codec_chain->ArrayCodecsOutputSize(m.chunk_spec()), 8u << 20);
  EXPECT_EQ(encoded.size(), 8u << 20);  // past the bound of the decoded size alone (3 MiB)
  EXPECT_LE(encoded.size(), m.max_encoded_chunk_bytes());
  Bytes back(values.size());
  ASSERT_TRUE(m.codec_chain->Decode(m.chunk_spec(), encoded, back.data()).ok());
  EXPECT_EQ(back, values);
}

TEST(FilterChain, RefusesWhatNumcodecsWouldMisread) {
  ArrayMetadata m;
  m.format = ZarrFormat::kV2;
  m.shape = {4};
  m.chunk_shape = {4};
  m.dtype = DataType::kFloat32;
  m.fill_value = FillValue(4, 0);
  m.codecs = json();
  const std::pair<const char*, const char*> refused[] = {
      {R"([{"id":"delta","dtype":"<i4"}])", "dtype"},  // not the array's type
      {R"([{"id":"shuffle"},{"id":"delta","dtype":"<f4"}])", "follows"},
      {R"([{"id":"bitround","keepbits":24}])", "keepbits"},
      {R"([{"id":"quantize","digits":2,"dtype":"<f4","astype":"<i4"}])", "float"},
      // categorize decodes to strings, not to this float32 array.
      {R"([{"id":"categorize","labels":["a"],"dtype":"<U1"}])", "categorize"}};
  for (const auto& [filters, word] : refused) {
    m.v2_filters = json::parse(filters);
    Status s = m.Finalize();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << filters;
    EXPECT_NE(s.message().find(word), std::string::npos) << s.message();
  }
  EXPECT_EQ(CodecRegistry::Builtin()
                .MakeV2Compressor(json{{"id", "delta"}}, DataType::kInt32)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

// v3 forms, as zarr-python 3 writes them (numcodecs.zarr3): the fixture's numcodecs.delta names
// its dtype by its v3 name; a transposed chunk is delta-encoded in its transposed order.
TEST(FilterChain, ZarrV3NumcodecsNames) {
  const ChunkSpec spec{DataType::kInt32, {2, 2}, FillValue(4, 0)};
  auto chain = CodecChain::FromV3Json(json::parse(R"([
      {"name":"transpose","configuration":{"order":[1,0]}},
      {"name":"numcodecs.delta","configuration":{"dtype":"int32"}},
      {"name":"bytes","configuration":{"endian":"little"}},
      {"name":"numcodecs.shuffle","configuration":{}}])"),
                                      spec);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  // np.array([[1, 5], [2, 9]]).T.ravel() = 1 2 5 9, deltas 1 1 3 4, shuffled by 4 bytes.
  const int32_t values[4] = {1, 5, 2, 9};
  Bytes encoded;
  ASSERT_TRUE((*chain)->Encode(spec, reinterpret_cast<const uint8_t*>(values), &encoded).ok());
  EXPECT_EQ(encoded, (Bytes{1, 1, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace zarrd
