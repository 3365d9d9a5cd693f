// zstd_blocks: what the GPU zstd kernels' entropy step is given by R1's chunks: blocks a chunk,
// sequences and literals a block, each field's table mode (predefined, RLE, compressed, repeated
// from an earlier block) and accuracy log, the Huffman trees' logs, and the bytes the tables of a
// block take at those logs against at the largest logs the kernels allow. Host only; a design
// aid for the entropy step (how many blocks' tables fit in an SM's shared memory).
//
//   zstd_blocks [--chunks N] [--threads T]
//
// The chunks are made and compressed as decode_kernels makes them (R1's first N chunks of 512 x
// 512 float32, zstd level 3) and split by the kernels' own split (zstd_block_split.h).
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/reference_array.h"
#include "common/decode/zstd_block_split.h"
#include "common/decode/zstd_huffman.h"
#include "common/util/thread_pool.h"

namespace {

using namespace zarrd::decode;
using namespace zarrd::decode::zstd;

constexpr int64_t kExtent = 16384, kChunk = 512;
constexpr size_t kChunkBytes = kChunk * kChunk * 4;
constexpr const char* kFieldNames[3] = {"literal lengths", "offsets", "match lengths"};
constexpr const char* kModeNames[4] = {"predefined", "RLE", "compressed", "repeated"};

struct Stats {
  uint64_t chunks = 0, blocks = 0, compressed = 0, sequences = 0, literals = 0;
  uint64_t huffman_literals = 0, four_streams = 0, treeless = 0;
  uint64_t modes[3][4] = {};
  std::map<uint32_t, uint64_t> logs[3];  // compressed tables' accuracy logs
  std::map<uint32_t, uint64_t> huffman_logs;
  uint64_t fse_bytes = 0, fse_bytes_max = 0, huffman_bytes = 0;
  std::map<uint64_t, uint64_t> fse_bytes_histogram;  // by KiB, rounded up

  void Add(const Stats& o) {
    chunks += o.chunks, blocks += o.blocks, compressed += o.compressed;
    sequences += o.sequences, literals += o.literals, huffman_literals += o.huffman_literals;
    four_streams += o.four_streams, treeless += o.treeless;
    for (int f = 0; f < 3; ++f) {
      for (int m = 0; m < 4; ++m) modes[f][m] += o.modes[f][m];
      for (auto [k, v] : o.logs[f]) logs[f][k] += v;
    }
    for (auto [k, v] : o.huffman_logs) huffman_logs[k] += v;
    fse_bytes += o.fse_bytes, huffman_bytes += o.huffman_bytes;
    fse_bytes_max = std::max(fse_bytes_max, o.fse_bytes_max);
    for (auto [k, v] : o.fse_bytes_histogram) fse_bytes_histogram[k] += v;
  }
};

// The accuracy log of a field's table as the block describes it (or an earlier block did).
uint32_t TableLog(const uint8_t* frame, const TableSource& t, int field) {
  if (t.mode == 0) return field == 1 ? 5 : 6;
  if (t.mode == 1) return 0;
  const Field f = FieldAt(field);
  int16_t norm[64];
  uint32_t log = 0;
  uint64_t used = 0;
  if (ReadFseCounts(frame + t.at, t.size, FieldMaxSymbol(f),
                    f == Field::kOffset ? kOffsetLogMax : kMatchLogMax, norm, &log,
                    &used) != DecodeError::kOk) {
    std::fprintf(stderr, "zstd_blocks: a table description does not read\n");
    std::exit(1);
  }
  return log;
}

void Count(const std::vector<uint8_t>& frame, Stats* s) {
  TaskSplit split;
  std::vector<SplitBlock> blocks(SplitCapacity(kChunkBytes));
  std::vector<uint8_t> region(RegionSize(kChunkBytes));
  split.blocks = blocks.data();
  split.capacity = uint32_t(blocks.size());
  split.region = region.data();
  split.region_size = region.size();
  SplitTask(frame.data(), frame.size(), kChunkBytes, &split);
  if (split.error != DecodeError::kOk) {
    std::fprintf(stderr, "zstd_blocks: the split failed: %s\n", DecodeErrorName(split.error));
    std::exit(1);
  }
  ++s->chunks;
  for (uint32_t i = 0; i < split.count; ++i) {
    const SplitBlock& b = blocks[i];
    ++s->blocks;
    if (b.kind != kCompressedBlock) continue;
    ++s->compressed;
    s->sequences += b.seq_count;
    s->literals += b.lit_count;
    if (b.lit_type >= 2) {
      ++s->huffman_literals;
      s->four_streams += b.four_streams;
      if (b.lit_type == 3) ++s->treeless;
      HufScratch scratch;
      WeightScratch weights;
      std::vector<HufEntry> table(1 << kHufMaxLog);
      uint32_t log = 0;
      uint64_t used = 0;
      if (ReadHuffmanTable(frame.data() + b.huf_at, b.huf_size, &scratch, &weights, table.data(),
                           &log, &used) == DecodeError::kOk) {
        ++s->huffman_logs[log];
        s->huffman_bytes += sizeof(HufEntry) << log;
      }
    }
    if (b.seq_count == 0) continue;
    const TableSource* fields[3] = {&b.ll, &b.of, &b.ml};
    uint64_t bytes = 0;
    for (int f = 0; f < 3; ++f) {
      const bool repeated = fields[f]->at < b.src;  // described by an earlier block
      ++s->modes[f][repeated ? 3 : fields[f]->mode];
      const uint32_t log = TableLog(frame.data(), *fields[f], f);
      if (!repeated && fields[f]->mode == 2) ++s->logs[f][log];
      bytes += sizeof(uint32_t) << log;
    }
    s->fse_bytes += bytes;
    s->fse_bytes_max = std::max(s->fse_bytes_max, bytes);
    ++s->fse_bytes_histogram[(bytes + 1023) / 1024];
  }
}

}  // namespace

int main(int argc, char** argv) {
  int n = 1024, threads = int(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if ((k == "--chunks" || k == "--threads") && i + 1 < argc) {
      (k == "--chunks" ? n : threads) = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: zstd_blocks [--chunks N] [--threads T]\n");
      return k == "--help" || k == "-h" ? 0 : 2;
    }
  }
  n = std::min<int>(n, (kExtent / kChunk) * (kExtent / kChunk));
  // A chunk's counts each, added up after: the order of chunks does not change the sums.
  std::vector<Stats> per_chunk(n);
  zarrd::ThreadPool pool(static_cast<size_t>(threads));
  const zarrd::Status counted = pool.ParallelFor(static_cast<size_t>(n), [&](size_t c) {
    std::vector<float> values(kChunk * kChunk);
    zarrd::bench::ReferenceChunk(static_cast<int64_t>(c), kChunk, kExtent, values.data());
    std::vector<uint8_t> frame(ZSTD_compressBound(kChunkBytes));
    const size_t z = ZSTD_compress(frame.data(), frame.size(), values.data(), kChunkBytes, 3);
    if (ZSTD_isError(z)) return zarrd::Internal(ZSTD_getErrorName(z));
    frame.resize(z);
    Count(frame, &per_chunk[c]);
    return zarrd::OkStatus();
  });
  if (!counted.ok()) {
    std::fprintf(stderr, "zstd_blocks: %s\n", counted.ToString().c_str());
    return 1;
  }
  Stats total;
  for (const Stats& s : per_chunk) total.Add(s);

  const double cb = double(total.compressed);
  std::printf("%llu chunks of R1 (zstd 3): %llu blocks, %llu compressed (%.1f a chunk)\n",
              (unsigned long long)total.chunks, (unsigned long long)total.blocks,
              (unsigned long long)total.compressed, cb / double(total.chunks));
  std::printf(
      "a compressed block: %.0f sequences, %.0f literals; Huffman literals in %.1f %% "
      "(four streams %.1f %%, treeless %.1f %%)\n",
      double(total.sequences) / cb, double(total.literals) / cb,
      100.0 * double(total.huffman_literals) / cb, 100.0 * double(total.four_streams) / cb,
      100.0 * double(total.treeless) / cb);
  for (int f = 0; f < 3; ++f) {
    uint64_t all = 0;
    for (uint64_t m : total.modes[f]) all += m;
    std::printf("%-16s", kFieldNames[f]);
    for (int m = 0; m < 4; ++m) {
      std::printf("  %s %.1f %%", kModeNames[m], 100.0 * double(total.modes[f][m]) / double(all));
    }
    std::printf("; compressed tables' logs:");
    for (auto [log, count] : total.logs[f])
      std::printf(" %u: %llu", log, (unsigned long long)count);
    std::printf("\n");
  }
  std::printf("Huffman trees' logs:");
  for (auto [log, count] : total.huffman_logs) {
    std::printf(" %u: %llu", log, (unsigned long long)count);
  }
  std::printf("\n");
  const uint64_t max_bytes = sizeof(uint32_t) * ((1u << kMatchLogMax) * 2 + (1u << kOffsetLogMax));
  std::printf(
      "FSE tables a block at their logs (4-byte entries): %.0f B on average, %llu B at most, "
      "against %llu B at the largest logs; Huffman tables %.0f B on average\n",
      double(total.fse_bytes) / cb, (unsigned long long)total.fse_bytes_max,
      (unsigned long long)max_bytes, double(total.huffman_bytes) / double(total.huffman_literals));
  std::printf("FSE tables a block, KiB (rounded up): blocks");
  for (auto [kib, count] : total.fse_bytes_histogram) {
    std::printf(" %llu: %llu", (unsigned long long)kib, (unsigned long long)count);
  }
  std::printf("\n");
  return 0;
}
