#include "common/codec/gpu_decode_plan.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>

#include "common/array/array.h"
#include "common/testing/test_util.h"

namespace zarrd {
namespace {

using nlohmann::json;
using zarrd::testing::Pattern;
using zarrd::testing::V3Meta;

json Codecs(const std::string& endian, const std::string& compressors) {
  return json::parse(R"([{"name":"bytes","configuration":{"endian":")" + endian + R"("}})" +
                     (compressors.empty() ? "" : "," + compressors) + "]");
}

std::optional<GpuChain> Plan(json codecs, DataType dtype = DataType::kInt32) {
  ArrayMetadata m = V3Meta({8, 8}, {4, 4}, codecs, dtype);
  EXPECT_TRUE(m.Finalize().ok());
  return PlanGpuChain(*m.codec_chain, dtype);
}

const char* kZstd = R"({"name":"zstd","configuration":{"level":1}})";
const char* kGzip = R"({"name":"gzip","configuration":{"level":1}})";
const char* kBloscLz4 =
    R"({"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4}})";
const char* kBloscZstd =
    R"({"name":"blosc","configuration":{"cname":"zstd","clevel":5,"shuffle":"shuffle","typesize":4}})";

TEST(GpuDecodePlan, ChainsOfBytesAndOneCompressor) {
  auto zstd = Plan(Codecs("little", kZstd));
  ASSERT_TRUE(zstd);
  EXPECT_EQ(zstd->kind, CompressorFamily::kZstd);
  EXPECT_EQ(zstd->swap_unit, 1u);
  auto big = Plan(Codecs("big", kGzip));
  ASSERT_TRUE(big);
  EXPECT_EQ(big->kind, CompressorFamily::kDeflate);
  EXPECT_EQ(big->swap_unit, 4u);
  EXPECT_EQ(Plan(Codecs("big", kZstd), DataType::kComplex128)->swap_unit, 8u);
  EXPECT_EQ(Plan(Codecs("big", kZstd), DataType::kUint8)->swap_unit, 1u);
  EXPECT_EQ(Plan(Codecs("little", kBloscLz4))->kind, CompressorFamily::kBlosc);
  EXPECT_EQ(
      Plan(Codecs("little", R"({"name":"numcodecs.zlib","configuration":{"level":1}})"))->kind,
      CompressorFamily::kDeflate);
}

json Transpose(const char* order) {
  return json::parse(std::string(R"({"name":"transpose","configuration":{"order":)") + order +
                     "}}");
}

// A crc32c after the compressor is checked on the GPU; transposes are placed there.
TEST(GpuDecodePlan, Crc32cAndTransposes) {
  auto checked = Plan(Codecs("big", std::string(kZstd) + R"(,{"name":"crc32c"})"));
  ASSERT_TRUE(checked);
  EXPECT_EQ(checked->kind, CompressorFamily::kZstd);
  EXPECT_TRUE(checked->crc32c);
  EXPECT_EQ(checked->swap_unit, 4u);
  EXPECT_TRUE(checked->dimension_order.empty());
  EXPECT_FALSE(Plan(Codecs("little", kZstd))->crc32c);

  json transposed = Codecs("little", kZstd);
  transposed.insert(transposed.begin(), Transpose("[1,0]"));
  auto plan = Plan(transposed);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->dimension_order, (std::vector<size_t>{1, 0}));
  // Two transposes that undo each other: C order.
  transposed.insert(transposed.begin(), Transpose("[1,0]"));
  ASSERT_TRUE(Plan(transposed));
  EXPECT_TRUE(Plan(transposed)->dimension_order.empty());

  // Three dimensions: decoded -> [1,2,0] -> [2,0,1]... composed as the codecs apply them.
  json codecs = Codecs("little", kZstd);
  codecs.insert(codecs.begin(), Transpose("[0,2,1]"));
  codecs.insert(codecs.begin(), Transpose("[1,2,0]"));
  ArrayMetadata m = V3Meta({4, 6, 8}, {2, 3, 4}, codecs, DataType::kInt32);
  ASSERT_TRUE(m.Finalize().ok());
  auto three = PlanGpuChain(*m.codec_chain, DataType::kInt32);
  ASSERT_TRUE(three);
  // [1,2,0] stores (d1, d2, d0); [0,2,1] of that stores (d1, d0, d2).
  EXPECT_EQ(three->dimension_order, (std::vector<size_t>{1, 0, 2}));
}

TEST(GpuDecodePlan, OtherChainsStayOnTheCpu) {
  EXPECT_FALSE(Plan(Codecs("little", "")));
  EXPECT_FALSE(Plan(Codecs("little", R"({"name":"crc32c"})")));
  EXPECT_FALSE(Plan(Codecs("little", std::string(R"({"name":"crc32c"},)") + kZstd)));
  EXPECT_FALSE(Plan(Codecs("little", std::string(kGzip) + "," + kZstd)));
  EXPECT_FALSE(Plan(Codecs("little", R"({"name":"numcodecs.bz2","configuration":{"level":1}})")));
  EXPECT_FALSE(Plan(json::parse(R"([{"name":"sharding_indexed","configuration":{
      "chunk_shape":[2,2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},
      {"name":"zstd","configuration":{"level":1}}],
      "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}])")));
}

TEST(GpuDecodePlan, ZarrV2Compressors) {
  for (const char* compressor : {R"({"id":"zlib","level":1})", R"({"id":"blosc","cname":"lz4",
        "clevel":5,"shuffle":1,"blocksize":0})"}) {
    ArrayMetadata m;
    m.format = ZarrFormat::kV2;
    m.shape = {8, 8};
    m.chunk_shape = {4, 4};
    m.dtype = DataType::kInt32;
    m.fill_value = FillValue(4, 0);
    m.v2_endian = Endian::kBig;
    m.v2_compressor = json::parse(compressor);
    m.codecs = json();
    ASSERT_TRUE(m.Finalize().ok()) << compressor;
    auto plan = PlanGpuChain(*m.codec_chain, m.dtype);
    ASSERT_TRUE(plan) << compressor;
    EXPECT_EQ(plan->swap_unit, 4u);
    m.v2_order = 'F';  // a transpose, placed on the GPU
    ASSERT_TRUE(m.Finalize().ok());
    plan = PlanGpuChain(*m.codec_chain, m.dtype);
    ASSERT_TRUE(plan) << compressor;
    EXPECT_EQ(plan->dimension_order, (std::vector<size_t>{1, 0}));
    // Filters, array->array or bytes->bytes, have no kernel: such arrays decode on the CPU.
    m.v2_order = 'C';
    for (const char* filters :
         {R"([{"id":"delta","dtype":">i4"}])", R"([{"id":"shuffle","elementsize":4}])",
          R"([{"id":"astype","encode_dtype":">i2","decode_dtype":">i4"}])"}) {
      m.v2_filters = json::parse(filters);
      ASSERT_TRUE(m.Finalize().ok()) << filters;
      EXPECT_FALSE(PlanGpuChain(*m.codec_chain, m.dtype)) << compressor << filters;
    }
    m.v2_filters = nullptr;
  }
}

Bytes Encode(const char* codec) {
  ArrayMetadata m = V3Meta({64, 64}, {64, 64}, Codecs("little", codec));
  EXPECT_TRUE(m.Finalize().ok());
  const auto values = Pattern(64 * 64);
  Bytes out;
  EXPECT_TRUE(
      m.codec_chain->Encode(m.chunk_spec(), reinterpret_cast<const uint8_t*>(values.data()), &out)
          .ok());
  return out;
}

// The kernel a chunk goes to, as a number (-1: the CPU), for gtest to print.
int For(const GpuChain& chain, ByteView encoded, size_t decoded_bytes = 64 * 64 * 4) {
  auto codec = GpuCodecFor(chain, encoded, encoded.size(), decoded_bytes);
  return codec ? static_cast<int>(*codec) : -1;
}
constexpr int kCpu = -1;
constexpr int Gpu(GpuCodec c) { return static_cast<int>(c); }

TEST(GpuDecodePlan, EachChunkByItsHeader) {
  const GpuChain zstd{CompressorFamily::kZstd}, blosc{CompressorFamily::kBlosc},
      deflate{CompressorFamily::kDeflate};
  EXPECT_EQ(For(zstd, Encode(kZstd)), Gpu(GpuCodec::kZstd));
  // A frame that names a dictionary: magic, descriptor (dictionary id of 1 byte, single
  // segment), the id, a content size byte.
  const Bytes with_dictionary = {0x28, 0xB5, 0x2F, 0xFD, 0x21, 0x07, 0x00, 0x01, 0x00, 0x00};
  EXPECT_EQ(For(zstd, with_dictionary), kCpu);
  // Garbage goes to the GPU, which reports it.
  EXPECT_EQ(For(zstd, Bytes{1, 2, 3}), Gpu(GpuCodec::kZstd));
  EXPECT_EQ(For(blosc, Encode(kBloscLz4)), Gpu(GpuCodec::kBlosc));
  EXPECT_EQ(For(blosc, Encode(kBloscZstd)), Gpu(GpuCodec::kBloscZstd));
  // A blosc container the compressor left as a copy takes no zstd.
  EXPECT_EQ(For(blosc, Encode(R"({"name":"blosc","configuration":{"cname":"zstd",
      "clevel":0,"shuffle":"noshuffle","typesize":4}})")),
            Gpu(GpuCodec::kBlosc));
  EXPECT_EQ(For(deflate, Encode(kGzip)), Gpu(GpuCodec::kGzip));
  const Bytes zlib = Encode(R"({"name":"numcodecs.zlib","configuration":{"level":1}})");
  EXPECT_EQ(For(deflate, zlib), Gpu(GpuCodec::kZlib));
  Bytes preset = zlib;
  preset[1] |= 0x20;  // FDICT
  EXPECT_EQ(For(deflate, preset), kCpu);

  // With a crc32c the header is peeked before the checksum's 4 bytes; a chunk too short to
  // hold them goes to the CPU, which reports it.
  const GpuChain checked{.kind = CompressorFamily::kZstd, .crc32c = true};
  Bytes dictionary_checked = with_dictionary;
  dictionary_checked.insert(dictionary_checked.end(), {0, 0, 0, 0});
  EXPECT_EQ(For(checked, dictionary_checked), kCpu);
  EXPECT_EQ(For(checked, Bytes{1, 2, 3}), kCpu);
  EXPECT_EQ(For(checked, Bytes{1, 2, 3, 4}), Gpu(GpuCodec::kZstd));
  // A value in GPU memory gives its head only; its size decides.
  const Bytes frame = Encode(kZstd);
  EXPECT_EQ(GpuCodecFor(checked, ByteView(frame.data(), 16), frame.size(), 64 * 64 * 4),
            GpuCodec::kZstd);
  EXPECT_EQ(GpuCodecFor(checked, ByteView(frame.data(), 3), 3, 64 * 64 * 4), std::nullopt);
}

// A frame of raw blocks of 1 byte each, written by hand: magic, descriptor (single segment,
// 1-byte content size), the content size, then `blocks` block headers (raw, 1 byte) and bytes.
Bytes FrameOfTinyBlocks(uint32_t blocks) {
  Bytes f = {0x28, 0xB5, 0x2F, 0xFD, 0x20, static_cast<uint8_t>(blocks)};
  for (uint32_t b = 0; b < blocks; ++b) {
    const uint32_t header = (1u << 3) | (b + 1 == blocks ? 1u : 0u);  // size 1, raw, last
    f.insert(f.end(), {static_cast<uint8_t>(header), 0, 0, static_cast<uint8_t>(b)});
  }
  return f;
}

// The kernel's split holds decoded_bytes / 1024 + 16 blocks: a frame of more goes to the CPU.
// libzstd decodes the hand-written frames, so they are valid zstd.
TEST(GpuDecodePlan, ZstdFramesOfMoreBlocksThanTheSplitHoldsGoToTheCpu) {
  const GpuChain zstd{CompressorFamily::kZstd};
  for (uint32_t blocks : {16u, 17u, 40u}) {
    const Bytes frame = FrameOfTinyBlocks(blocks);
    std::vector<uint8_t> out(blocks);
    ASSERT_EQ(ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size()), blocks);
    for (uint32_t b = 0; b < blocks; ++b) ASSERT_EQ(out[b], b);
    EXPECT_EQ(For(zstd, frame, blocks), blocks <= 16 ? Gpu(GpuCodec::kZstd) : kCpu) << blocks;
  }
  // The head alone (a value in GPU memory) cannot be walked, and goes to the GPU.
  const Bytes frame = FrameOfTinyBlocks(40);
  EXPECT_EQ(For(zstd, ByteView(frame.data(), 16), 40), Gpu(GpuCodec::kZstd));
  // A frame of 1 MiB in big blocks fits.
  EXPECT_EQ(For(zstd, Encode(kZstd), 1 << 20), Gpu(GpuCodec::kZstd));
}

TEST(GpuDecodePolicy, ModesAndThreshold) {
  EXPECT_EQ(*ParseGpuDecodeMode("auto"), GpuDecodeMode::kAuto);
  EXPECT_EQ(*ParseGpuDecodeMode("always"), GpuDecodeMode::kAlways);
  EXPECT_EQ(*ParseGpuDecodeMode("never"), GpuDecodeMode::kNever);
  EXPECT_EQ(ParseGpuDecodeMode("gpu").status().code(), StatusCode::kInvalidArgument);
  for (auto mode : {GpuDecodeMode::kAuto, GpuDecodeMode::kAlways, GpuDecodeMode::kNever}) {
    EXPECT_EQ(*ParseGpuDecodeMode(GpuDecodeModeName(mode)), mode);
  }
  const auto zstd = CompressorFamily::kZstd, blosc = CompressorFamily::kBlosc,
             deflate = CompressorFamily::kDeflate;
  // auto: zstd, blosc and deflate, measured faster on the GPU end to end from 1024 chunks; the
  // others (crc32c alone, none) never.
  for (auto family : {zstd, blosc, deflate}) {
    EXPECT_TRUE(GpuDecodePolicy{}.Use(1024, family));
    EXPECT_FALSE(GpuDecodePolicy{}.Use(1023, family));
  }
  EXPECT_FALSE(GpuDecodePolicy{}.Use(1 << 20, CompressorFamily::kOther));
  const GpuDecodePolicy zstd_auto{.auto_families = {zstd}};
  EXPECT_FALSE(zstd_auto.Use(kGpuDecodeMinChunks - 1, zstd));
  EXPECT_TRUE(zstd_auto.Use(kGpuDecodeMinChunks, zstd));
  EXPECT_FALSE(zstd_auto.Use(kGpuDecodeMinChunks, blosc));
  EXPECT_TRUE(GpuDecodePolicy{.mode = GpuDecodeMode::kAlways}.Use(1, zstd));
  EXPECT_TRUE(GpuDecodePolicy{.mode = GpuDecodeMode::kAlways}.Use(1, deflate));
  EXPECT_FALSE(GpuDecodePolicy{.mode = GpuDecodeMode::kNever}.Use(1 << 20, blosc));
  EXPECT_TRUE(
      (GpuDecodePolicy{.mode = GpuDecodeMode::kAuto, .min_chunks = 2, .auto_families = {zstd}}.Use(
          2, zstd)));
}

// A sharding chain whose inner chunks of 4 x 5 have `codecs`, its index checked by a crc32c.
json ShardsOf4x5(const json& codecs) {
  return {{{"name", "sharding_indexed"},
           {"configuration",
            {{"chunk_shape", {4, 5}},
             {"codecs", codecs},
             {"index_codecs", Codecs("little", R"({"name":"crc32c"})")}}}}};
}

// Copies a chunk's decoded bytes into `result` as placement `p` says (4-byte elements).
void Place(const Placement& p, const uint8_t* decoded, int32_t* result) {
  const size_t rank = p.counts.size();
  std::vector<int64_t> k(rank, 0);
  for (bool more = true; more;) {
    int64_t from = p.chunk_offset, to = p.result_offset;
    for (size_t d = 0; d < rank; ++d) {
      from += k[d] * p.chunk_strides[d];
      to += k[d] * p.result_strides[d];
    }
    std::memcpy(reinterpret_cast<uint8_t*>(result) + to, decoded + from, 4);
    more = false;
    for (size_t d = rank; d-- > 0;) {
      if (++k[d] < p.counts[d]) {
        more = true;
        break;
      }
      k[d] = 0;
    }
  }
}

// Records what the engine hands over: encoded chunks, decoded ones (with their placements) and
// fills. With `memory_for` set, the GPU it stands for has memory for that many encoded chunks:
// the next CommitEncoded fails with RESOURCE_EXHAUSTED, and from then on the sink says a chunk
// would wait when `cpus_take_over` (gpu_decode auto).
class RecordingSink : public ChunkSink {
 public:
  explicit RecordingSink(bool accepts, std::optional<size_t> memory_for = std::nullopt,
                         bool cpus_take_over = true)
      : accepts_(accepts), memory_for_(memory_for), cpus_take_over_(cpus_take_over) {}
  Result<Buffer> Begin(const Placement&, size_t chunk_bytes) override {
    auto* b = new Bytes(chunk_bytes);
    return Buffer{b->data(), b};
  }
  Status Commit(const Placement& p, const Buffer& buffer) override {
    std::unique_ptr<Bytes> b(static_cast<Bytes*>(buffer.token));
    std::lock_guard lock(mutex_);
    ++decoded;
    decoded_placements.push_back(p);
    decoded_bytes.push_back(std::move(*b));
    return OkStatus();
  }
  void Abandon(const Buffer& buffer) override { delete static_cast<Bytes*>(buffer.token); }
  Status Fill(const Placement&, const uint8_t*, size_t) override {
    std::lock_guard lock(mutex_);
    ++filled;
    return OkStatus();
  }
  bool accepts_encoded(CompressorFamily) const override { return accepts_; }
  bool encoded_would_wait() const override { return cpus_take_over_ && out_of_memory_; }
  Status CommitEncoded(const Placement& p, ByteView encoded, EncodedChunk chunk) override {
    std::lock_guard lock(mutex_);
    EXPECT_FALSE(encoded.empty());
    if (memory_for_ && encoded_chunks.size() >= *memory_for_) {
      out_of_memory_ = true;
      return ResourceExhausted("device staging buffer: cudaErrorMemoryAllocation");
    }
    encoded_chunks.push_back(std::move(chunk));
    placements.push_back(p);
    encoded_bytes.emplace_back(encoded.begin(), encoded.end());
    return OkStatus();
  }

  std::mutex mutex_;
  bool accepts_;
  std::optional<size_t> memory_for_;
  bool cpus_take_over_;
  std::atomic<bool> out_of_memory_{false};
  int decoded = 0, filled = 0;
  std::vector<EncodedChunk> encoded_chunks;
  std::vector<Placement> placements;
  std::vector<Bytes> encoded_bytes;
  std::vector<Placement> decoded_placements;
  std::vector<Bytes> decoded_bytes;
};

TEST(GpuDecodeEngine, EncodedChunksGoToASinkThatTakesThem) {
  ArrayMetadata m = V3Meta({8, 12}, {4, 4}, Codecs("big", kZstd));
  auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "g/a", m);
  auto values = Pattern(8 * 12);
  for (int i = 0; i < 4 * 12; ++i) values[i] = 0;  // the first row of chunks stays absent
  ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  const auto all = *ResolveSelection({}, m.shape);
  RecordingSink gpu(true);
  ASSERT_TRUE(array->ReadToSink(all, gpu).ok());
  EXPECT_EQ(gpu.filled, 3);
  EXPECT_EQ(gpu.decoded, 0);
  ASSERT_EQ(gpu.encoded_chunks.size(), 3u);
  bool named = false;
  for (const auto& c : gpu.encoded_chunks) {
    EXPECT_EQ(c.codec, GpuCodec::kZstd);
    EXPECT_EQ(c.swap_unit, 4u);
    EXPECT_EQ(c.decoded_bytes, 4u * 4 * 4);
    named |= c.where == "array 'g/a' chunk 'g/a/c/1/2'";
  }
  EXPECT_TRUE(named);
  RecordingSink cpu(false);
  ASSERT_TRUE(array->ReadToSink(all, cpu).ok());
  EXPECT_EQ(cpu.decoded, 3);
  EXPECT_TRUE(cpu.encoded_chunks.empty());
}

// A shard's inner chunks are handed over one by one, each named by its shard and position;
// absent inner chunks are filled, and a sink that decodes on the host gets them decoded.
TEST(GpuDecodeEngine, InnerChunksOfShardsGoToASinkThatTakesThem) {
  ArrayMetadata m = V3Meta({8, 8}, {8, 4}, json::parse(R"([{"name":"sharding_indexed",
      "configuration":{"chunk_shape":[4,2],"codecs":[{"name":"bytes","configuration":
      {"endian":"little"}},{"name":"zstd","configuration":{"level":1}}],"index_codecs":
      [{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}}])"));
  auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "s", m);
  auto values = Pattern(8 * 8);
  for (int r = 0; r < 4; ++r) values[r * 8 + 6] = values[r * 8 + 7] = 0;  // one inner chunk absent
  ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
  const auto all = *ResolveSelection({}, m.shape);
  RecordingSink gpu(true);
  ASSERT_TRUE(array->ReadToSink(all, gpu).ok());
  EXPECT_EQ(gpu.filled, 1);
  EXPECT_EQ(gpu.decoded, 0);
  ASSERT_EQ(gpu.encoded_chunks.size(), 7u);
  std::vector<std::string> names;
  for (const auto& c : gpu.encoded_chunks) {
    EXPECT_EQ(c.codec, GpuCodec::kZstd);
    EXPECT_EQ(c.swap_unit, 1u);
    EXPECT_EQ(c.decoded_bytes, 4u * 2 * 4);
    names.push_back(c.where);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "array 's' chunk 's/c/0/1' inner chunk '3'"),
            names.end());
  RecordingSink cpu(false);
  ASSERT_TRUE(array->ReadToSink(all, cpu).ok());
  EXPECT_EQ(cpu.decoded, 7);
  EXPECT_TRUE(cpu.encoded_chunks.empty());
}

// A transposed chain with a crc32c goes to the GPU with its checksum flagged and placements in
// the stored (transposed) order: decoding each chunk here with libzstd, checking its crc32c and
// copying it as its placement says gives numpy's values for the selection.
// The same for the inner chunks of shards.
TEST(GpuDecodeEngine, TransposedChunksArePlacedInTheirStoredOrder) {
  json codecs = Codecs("little", std::string(kZstd) + R"(,{"name":"crc32c"})");
  codecs.insert(codecs.begin(), Transpose("[1,0]"));
  const json sharded = ShardsOf4x5(codecs);
  for (bool shards : {false, true}) {
    ArrayMetadata m =
        shards ? V3Meta({10, 12}, {8, 10}, sharded) : V3Meta({10, 12}, {4, 5}, codecs);
    auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "t", m);
    const auto values = Pattern(10 * 12);
    ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
    for (const char* text : {"", "1:9:2, ::-3", "7, 2:11", "::-1, 4"}) {
      SCOPED_TRACE(std::string(shards ? "shards: " : "") + text);
      const auto sel = *ResolveSelection(*ParseSelection(text), m.shape);
      const auto expected = zarrd::testing::Reference(values, m.shape, sel);
      RecordingSink sink(true);
      ASSERT_TRUE(array->ReadToSink(sel, sink).ok());
      ASSERT_EQ(sink.decoded, 0);
      std::vector<int32_t> result(expected.size(), -1);
      for (size_t c = 0; c < sink.placements.size(); ++c) {
        const auto& chunk = sink.encoded_chunks[c];
        EXPECT_TRUE(chunk.crc32c);
        const Bytes& stored = sink.encoded_bytes[c];
        ASSERT_GE(stored.size(), 4u);
        uint32_t crc;
        std::memcpy(&crc, stored.data() + stored.size() - 4, 4);
        ASSERT_EQ(crc, Crc32c(ByteView(stored.data(), stored.size() - 4)));
        Bytes decoded(chunk.decoded_bytes);
        ASSERT_EQ(ZSTD_decompress(decoded.data(), decoded.size(), stored.data(), stored.size() - 4),
                  decoded.size());
        Place(sink.placements[c], decoded.data(), result.data());
      }
      EXPECT_EQ(result, expected);
    }
  }
}

// A GPU without memory for more than two chunks: under auto the engine decodes the rest itself
// (libzstd decodes the two handed over here), and the values are numpy's; under always the read
// fails with RESOURCE_EXHAUSTED naming the chunk. The same for the inner chunks of shards.
TEST(GpuDecodeEngine, ChunksTheGpuHasNoMemoryForAreDecodedOnTheCpusUnderAuto) {
  const json codecs = Codecs("little", kZstd);
  const json sharded = ShardsOf4x5(codecs);
  for (bool shards : {false, true}) {
    SCOPED_TRACE(shards ? "shards" : "chunks");
    ArrayMetadata m =
        shards ? V3Meta({16, 20}, {8, 10}, sharded) : V3Meta({16, 20}, {4, 5}, codecs);
    auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "t", m);
    const auto values = Pattern(16 * 20);
    ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
    const auto sel = *ResolveSelection(*ParseSelection("1:15, ::-1"), m.shape);
    const auto expected = zarrd::testing::Reference(values, m.shape, sel);
    RecordingSink sink(true, /*memory_for=*/2);
    Status read = array->ReadToSink(sel, sink);
    ASSERT_TRUE(read.ok()) << read.ToString();
    ASSERT_EQ(sink.encoded_chunks.size(), 2u);
    EXPECT_EQ(sink.decoded, 16 - 2);
    std::vector<int32_t> result(expected.size(), -1);
    for (size_t c = 0; c < sink.placements.size(); ++c) {
      const Bytes& stored = sink.encoded_bytes[c];
      Bytes decoded(sink.encoded_chunks[c].decoded_bytes);
      ASSERT_EQ(ZSTD_decompress(decoded.data(), decoded.size(), stored.data(), stored.size()),
                decoded.size());
      Place(sink.placements[c], decoded.data(), result.data());
    }
    for (size_t c = 0; c < sink.decoded_placements.size(); ++c) {
      Place(sink.decoded_placements[c], sink.decoded_bytes[c].data(), result.data());
    }
    EXPECT_EQ(result, expected);

    RecordingSink always(true, /*memory_for=*/2, /*cpus_take_over=*/false);
    read = array->ReadToSink(sel, always);
    EXPECT_EQ(read.code(), StatusCode::kResourceExhausted) << read.ToString();
    EXPECT_NE(read.message().find("array 't' chunk 't/c/"), std::string::npos) << read.message();
  }
}

TEST(GpuDecodeEngine, OtherChainsAreDecodedOnTheHost) {
  for (const json& codecs :
       {Codecs("little", ""), Codecs("little", std::string(R"({"name":"crc32c"},)") + kZstd)}) {
    SCOPED_TRACE(codecs.dump());
    ArrayMetadata m = V3Meta({64, 64}, {32, 32}, codecs);
    auto array = *Array::Create(StoreHandle(MakeMemoryStore()), "a", m);
    const auto values = Pattern(64 * 64);
    ASSERT_TRUE(array->Write({}, values.data(), values.size() * 4).ok());
    RecordingSink sink(true);
    ASSERT_TRUE(array->ReadToSink(*ResolveSelection({}, m.shape), sink).ok());
    EXPECT_EQ(sink.decoded, 4);
    EXPECT_TRUE(sink.encoded_chunks.empty());
  }
}

}  // namespace
}  // namespace zarrd
