// A Zarr array in a store: metadata, and chunk-parallel reads and writes of selections.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/array/chunk_sink.h"
#include "common/array/chunk_source.h"
#include "common/index/advanced_selection.h"
#include "common/index/selection.h"
#include "common/kvstore/store_handle.h"
#include "common/metadata/metadata.h"
#include "common/util/thread_pool.h"

namespace zarrd {

struct IoOptions {
  ThreadPool* pool = nullptr;  // nullptr: ThreadPool::Default()
  const std::atomic<bool>* cancelled = nullptr;
  // The result is memory another core or process reads between requests (a client's
  // shared-memory region): each chunk is decoded in a per-thread buffer and copied in, also
  // where it could be decoded in place. zstd decoding straight into lines another core held
  // took 1.6x as long as decode + copy (bench/chunk_latency); into private memory in place is
  // a few percent faster.
  bool result_shared = false;
  // String arrays (common/dtype/string_arena.h): results and inputs are string handles; the
  // strings decoded stay here. Reads and writes of string arrays without one are refused.
  StringArena* strings = nullptr;
};

// "array 'path'" ('/' for the root), as errors name arrays.
std::string ArrayName(const std::string& path);

class Array {
 public:
  // Opens `path` ("" is the store root): zarr.json (v3) or .zarray (v2). Arrays of one store
  // exclude each other's conflicting changes through the locks of its handle.
  static Result<std::shared_ptr<Array>> Open(StoreHandle store, std::string path);
  // Writes the metadata (finalizing it); ALREADY_EXISTS unless `overwrite`, which first deletes
  // everything under `path`.
  static Result<std::shared_ptr<Array>> Create(StoreHandle store, std::string path,
                                               ArrayMetadata metadata, bool overwrite = false);

  std::shared_ptr<const ArrayMetadata> metadata() const;
  const std::string& path() const { return path_; }
  const StoreHandle& store() const { return store_; }

  // Reads the selection into `out`: C order, little-endian, numpy's result shape.
  Status Read(const Selection& selection, void* out, size_t out_size,
              const IoOptions& options = {}) const;
  // Reads an already resolved selection (e.g. one band of a streamed result).
  Status ReadResolved(const ResolvedSelection& selection, void* out, size_t out_size,
                      const IoOptions& options = {}) const;
  // Whether a read of `selection` sends its chunks (a shard's inner chunks) to the GPU under
  // `policy`: their chain is one the GPU decodes (PlanGpuChain) and the policy takes a read of
  // that many chunks.
  bool DecodesOnGpu(const ResolvedSelection& selection, const GpuDecodePolicy& policy) const;
  // Reads an already resolved selection chunk by chunk into `sink` (e.g. GPU memory); calls
  // sink.Finish() before returning.
  Status ReadToSink(const ResolvedSelection& selection, ChunkSink& sink,
                    const IoOptions& options = {}) const;
  // Writes `in` (laid out as Read's result) into the selection.
  Status Write(const Selection& selection, const void* in, size_t in_size,
               const IoOptions& options = {});
  // Writes what `source` gives for each chunk of an already resolved selection (e.g. input in
  // GPU memory).
  Status WriteFromSource(const ResolvedSelection& selection, ChunkSource& source,
                         const IoOptions& options = {});
  // Reads or writes an advanced selection (orthogonal, points, mask;
  // common/index/advanced_selection.h) in the layout of ResolvedAdvanced::result_shape. Each
  // touched chunk is decoded once whatever the order or repetition of the indices; writes
  // read-modify-write each chunk under its lock, the last of repeated positions winning, as in
  // numpy.
  Status ReadAdvanced(const ResolvedAdvanced& selection, void* out, size_t out_size,
                      const IoOptions& options = {}) const;
  Status WriteAdvanced(const ResolvedAdvanced& selection, const void* in, size_t in_size,
                       const IoOptions& options = {});
  // Changes the shape, whole or not at all; chunks wholly outside the new shape are deleted
  // and the kept edge chunks have their cut-off part reset to the fill value, as zarr-python
  // does. Every chunk is read and trimmed before the metadata changes; a crash after that
  // leaves only chunk parts outside the shape, which the next resize clears before growing.
  Status Resize(const std::vector<int64_t>& shape, const IoOptions& options = {});
  Status SetAttributes(const nlohmann::json& attributes);

  // True once the node was created, deleted or resized through another Array (or a node above
  // it deleted): reads and writes then fail ABORTED, and the caller opens the array again.
  bool stale() const;

 private:
  // New values of chunk keys; nullopt deletes the key.
  using ChunkEdits = std::map<std::string, std::optional<Bytes>>;

  Array(StoreHandle store, std::string path, ArrayMetadata metadata, uint64_t generation);
  Status WriteMetadata(const ArrayMetadata& metadata);
  // Under NodeLocks: ABORTED when this Array is stale, or `sel` (resolved against an older
  // shape) does not fit the current one.
  Status CheckCurrent(uint64_t generation, const ArrayMetadata& m,
                      const ResolvedSelection* sel) const;
  // What resetting every stored chunk's part outside `bound` to the fill value changes, reading
  // chunks from `base` where it has them.
  Result<ChunkEdits> PlanTrim(const ArrayMetadata& m, const std::vector<std::string>& keys,
                              const std::vector<int64_t>& bound, const ChunkEdits& base) const;
  Status ApplyEdits(const ChunkEdits& edits);
  std::string ChunkStoreKey(const ArrayMetadata& m, const std::vector<int64_t>& index) const;
  Status ReadChunks(const ArrayMetadata& m, const ResolvedSelection& sel, ChunkSink& sink,
                    const IoOptions& options) const;
  // Reads the parts of chunks that `decoder` reads in parts (inner chunks of shards).
  Status ReadParts(const ArrayMetadata& m, const PartialDecoder& decoder,
                   const ResolvedSelection& sel, ChunkSink& sink, const IoOptions& options) const;
  // The plan for handing this read's chunks of `codecs` over encoded, when `sink` takes them.
  static std::optional<GpuChain> GpuChainFor(const CodecChain& codecs, DataType dtype,
                                             const ChunkSink& sink);
  // One chunk as it is handed over.
  ChunkSink::EncodedChunk EncodedChunkFor(const GpuChain& gpu, GpuCodec codec,
                                          const ChunkSpec& spec, const std::string& key) const;
  // "array 'a' chunk 'a/c/0/1'": what errors about a chunk are said of.
  std::string ChunkName(const std::string& key) const;
  Status Context(const Status& status, const std::string& key) const;
  // The values of chunk `key` before a write changes part of them: decoded into `chunk` (through
  // `encoded`), or the fill value where the chunk is absent.
  Status LoadChunk(const ArrayMetadata& m, const ChunkSpec& spec, const std::string& key,
                   Bytes& encoded, uint8_t* chunk) const;
  // Stores chunk `key` after a write changed it (`chunk`, decoded): deletes it when every element
  // is the fill value, else encodes it into `encoded` and sets it.
  Status StoreChunk(const ArrayMetadata& m, const ChunkSpec& spec, const std::string& key,
                    const Bytes& chunk, Bytes& encoded) const;
  // m.chunk_spec() with the request's string arena; INVALID_ARGUMENT for a string array
  // without one.
  Result<ChunkSpec> EngineSpec(const ArrayMetadata& m, const IoOptions& options) const;

  StoreHandle store_;
  std::string path_;
  mutable std::mutex metadata_mutex_;
  std::shared_ptr<const ArrayMetadata> metadata_;
  std::atomic<uint64_t> generation_;  // NodeLocks::Generation of path_ that metadata_ is of
};

}  // namespace zarrd
