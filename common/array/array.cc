#include "common/array/array.h"

#include <malloc.h>

#include <cstring>
#include <map>

#include "common/array/engine_stats.h"
#include "common/codec/partial_decoder.h"
#include "common/index/chunk_selection.h"
#include "common/kvstore/device_resident_store.h"
#include "common/kvstore/store_handle.h"
#include "common/metadata/json_document.h"
#include "common/metadata/node_lifecycle.h"
#include "common/util/strided_copy.h"

namespace zarrd {

using nlohmann::json;

namespace {

constexpr const char* kV3Metadata = "zarr.json";
constexpr const char* kV2Array = ".zarray";
constexpr const char* kV2Attrs = ".zattrs";

// Per-thread buffers: fresh multi-MiB allocations are mmapped and page-faulted on every chunk.
// Scratch buffers a thread keeps from chunk to chunk (encoded and decoded chunks), so a read does
// not map and fault in a chunk-sized buffer per chunk. An idle pool thread frees them: reads of
// 64 MiB chunks left a few hundred MiB resident in them otherwise.
thread_local Bytes thread_buffers[3];

Bytes& ThreadBuffer(int which) { return thread_buffers[which]; }

void FreeThreadBuffers() {
  size_t freed = 0;
  for (Bytes& b : thread_buffers) {
    freed += b.capacity();
    Bytes().swap(b);
  }
  if (freed > 0) ::malloc_trim(0);  // buffers below the mmap threshold went back to an arena
}

[[maybe_unused]] const bool kIdleHookSet = (ThreadPool::SetIdleHook(&FreeThreadBuffers), true);

std::string Quoted(const std::string& path) { return "'" + (path.empty() ? "/" : path) + "'"; }

// Writes decoded chunks into a result in host memory: straight into it when the chunk is one
// contiguous run there (unless `staged`: IoOptions::result_shared), else through a per-thread
// buffer and a strided copy.
class HostSink final : public ChunkSink {
 public:
  HostSink(uint8_t* out, size_t elem_size, bool staged)
      : out_(out), elem_size_(elem_size), staged_(staged) {}
  Result<Buffer> Begin(const Placement& p, size_t chunk_bytes) override {
    if (p.contiguous && !staged_) return Buffer{out_ + p.result_offset};
    Bytes& decoded = ThreadBuffer(1);
    decoded.resize(chunk_bytes);
    return Buffer{decoded.data()};
  }
  Status Commit(const Placement& p, const Buffer& buffer) override {
    if (buffer.data != out_ + p.result_offset) {
      StridedCopy(buffer.data + p.chunk_offset, p.chunk_strides.data(), out_ + p.result_offset,
                  p.result_strides.data(), p.counts.data(), p.counts.size(), elem_size_);
    }
    return OkStatus();
  }
  Status Fill(const Placement& p, const uint8_t* fill_value, size_t elem_size) override {
    StridedFill(out_ + p.result_offset, p.result_strides.data(), p.counts.data(), p.counts.size(),
                fill_value, elem_size);
    return OkStatus();
  }

 private:
  uint8_t* out_;
  size_t elem_size_;
  bool staged_;
};

// Decodes into the sink's buffer and commits it, or gives the buffer back on failure.
Status DecodeInto(ChunkSink& sink, const Placement& p, const CodecChain& chain,
                  const ChunkSpec& spec, ByteView encoded) {
  ZARRD_ASSIGN_OR_RETURN(ChunkSink::Buffer buffer, sink.Begin(p, spec.num_bytes()));
  Status decoded = chain.Decode(spec, encoded, buffer.data);
  if (!decoded.ok()) {
    sink.Abandon(buffer);
    return decoded;
  }
  GlobalEngineStats().chunks_decoded.fetch_add(1, std::memory_order_relaxed);
  return sink.Commit(p, buffer);
}

// Chunks stored raw (bytes codec, little-endian, nothing else) need no decoding.
bool IsRawChain(const ArrayMetadata& m) {
  return !m.codec_chain->has_array_codecs() && !m.codec_chain->has_bytes_codecs() &&
         m.codec_chain->array_to_bytes().IsIdentity(m.chunk_spec());
}

// A raw chunk: the store reads it straight into the sink's buffer (no copy through memory of
// our own). Absent chunks are filled.
Status ReadRawInto(Store& store, ChunkSink& sink, const Placement& p, const std::string& key,
                   size_t nbytes, const uint8_t* fill_value, size_t elem_size) {
  ZARRD_ASSIGN_OR_RETURN(ChunkSink::Buffer buffer, sink.Begin(p, nbytes));
  auto size = store.GetExact(key, MutableByteView(buffer.data, nbytes));
  if (size.ok() && *size && **size == nbytes) {
    GlobalEngineStats().chunks_decoded.fetch_add(1, std::memory_order_relaxed);
    return sink.Commit(p, buffer);
  }
  sink.Abandon(buffer);
  if (!size.ok()) return size.status();
  if (!*size) {
    GlobalEngineStats().chunks_filled.fetch_add(1, std::memory_order_relaxed);
    return sink.Fill(p, fill_value, elem_size);
  }
  return DataLoss("bytes codec: chunk holds " + std::to_string(**size) +
                  " bytes, its shape needs " + std::to_string(nbytes));
}

}  // namespace

Array::Array(StoreHandle store, std::string path, ArrayMetadata metadata, uint64_t generation)
    : store_(std::move(store)),
      path_(std::move(path)),
      metadata_(std::make_shared<const ArrayMetadata>(std::move(metadata))),
      generation_(generation) {}

bool Array::stale() const { return generation_ != store_.node_locks().Generation(path_); }

Status Array::CheckCurrent(uint64_t generation, const ArrayMetadata& m,
                           const ResolvedSelection* sel) const {
  if (generation_ != generation) {
    return Status(StatusCode::kAborted, "array " + Quoted(path_) +
                                            " was deleted, replaced or resized through another "
                                            "handle while open; open it again");
  }
  if (!sel) return OkStatus();
  for (size_t d = 0; d < sel->dims.size(); ++d) {
    const DimSelection& dim = sel->dims[d];
    if (dim.count == 0) continue;
    const int64_t last = dim.start + (dim.count - 1) * dim.step;
    if (std::min(dim.start, last) < 0 || std::max(dim.start, last) >= m.shape[d]) {
      return Status(StatusCode::kAborted,
                    "array " + Quoted(path_) +
                        " was resized while the request was prepared; resolve its selection again");
    }
  }
  return OkStatus();
}

std::shared_ptr<const ArrayMetadata> Array::metadata() const {
  std::lock_guard lock(metadata_mutex_);
  return metadata_;
}

std::string Array::ChunkName(const std::string& key) const {
  return "array " + Quoted(path_) + " chunk '" + key + "'";
}

Status Array::Context(const Status& status, const std::string& key) const {
  return status.WithContext(ChunkName(key));
}

Result<ChunkSpec> Array::EngineSpec(const ArrayMetadata& m, const IoOptions& options) const {
  ChunkSpec spec = m.chunk_spec();
  if (IsStringType(m.dtype)) {
    if (!options.strings) {
      return InvalidArgument("array " + Quoted(path_) + " holds strings (" + m.result_typestr() +
                             "), which are read and written as HOST data only");
    }
    spec.strings = options.strings;
  }
  return spec;
}

std::string Array::ChunkStoreKey(const ArrayMetadata& m, const std::vector<int64_t>& index) const {
  return JoinKey(path_, m.ChunkKey(index));
}

Result<std::shared_ptr<Array>> Array::Open(StoreHandle store, std::string path) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "array path"));
  const std::string where = "array " + Quoted(path);
  auto hold = store.node_locks().Share(path);
  const uint64_t generation = hold.before();
  auto v3 = ReadJsonDocument(*store, JoinKey(path, kV3Metadata));
  if (!v3.ok()) return v3.status().WithContext(where);
  if (*v3) {
    const json& j = **v3;
    if (j.is_object() && j.value("node_type", "") == "group") {
      return FailedPrecondition(where + ": the node is a group, not an array");
    }
    auto m = ParseV3ArrayMetadata(j);
    if (!m.ok()) return m.status().WithContext(where + " zarr.json");
    return std::shared_ptr<Array>(
        new Array(std::move(store), std::move(path), std::move(*m), generation));
  }
  auto v2 = ReadJsonDocument(*store, JoinKey(path, kV2Array));
  if (!v2.ok()) return v2.status().WithContext(where);
  if (!*v2) {
    Bytes probe;
    ZARRD_ASSIGN_OR_RETURN(bool group, store->Get(JoinKey(path, ".zgroup"), &probe));
    if (group) return FailedPrecondition(where + ": the node is a group, not an array");
    return NotFound(where + ": no zarr.json or .zarray in " + store->Describe());
  }
  auto attrs = ReadJsonDocument(*store, JoinKey(path, kV2Attrs));
  if (!attrs.ok()) return attrs.status().WithContext(where);
  auto m = ParseV2ArrayMetadata(**v2, *attrs ? **attrs : json(nullptr));
  if (!m.ok()) return m.status().WithContext(where + " .zarray");
  return std::shared_ptr<Array>(
      new Array(std::move(store), std::move(path), std::move(*m), generation));
}

Result<std::shared_ptr<Array>> Array::Create(StoreHandle store, std::string path,
                                             ArrayMetadata metadata, bool overwrite) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "array path"));
  const std::string where = "array " + Quoted(path);
  Status s = metadata.Finalize();
  if (!s.ok()) return s.WithContext(where);
  auto hold = store.node_locks().Own(path);
  ZARRD_RETURN_IF_ERROR(CheckNoArrayAbove(*store, path, "array"));
  ZARRD_ASSIGN_OR_RETURN(bool exists, NodeExists(*store, path));
  if (exists && !overwrite) return AlreadyExists(where + ": a node exists there already");
  if (exists) {
    ZARRD_ASSIGN_OR_RETURN(auto keys, store->List(path.empty() ? "" : path + "/"));
    ZARRD_RETURN_IF_ERROR(DeleteKeysMetadataFirst(*store, keys));
  } else {
    ZARRD_RETURN_IF_ERROR(ClearForNewNode(*store, path, "array"));
  }
  std::shared_ptr<Array> array(
      new Array(std::move(store), std::move(path), metadata, hold.after()));
  ZARRD_RETURN_IF_ERROR(array->WriteMetadata(metadata));
  return array;
}

Status Array::WriteMetadata(const ArrayMetadata& m) {
  if (m.format == ZarrFormat::kV3)
    return WriteJsonDocument(*store_, JoinKey(path_, kV3Metadata), ToV3Json(m));
  ZARRD_RETURN_IF_ERROR(WriteJsonDocument(*store_, JoinKey(path_, kV2Array), ToV2Json(m)));
  if (m.attributes.empty()) return store_->Delete(JoinKey(path_, kV2Attrs));
  return WriteJsonDocument(*store_, JoinKey(path_, kV2Attrs), m.attributes);
}

Status Array::SetAttributes(const json& attributes) {
  if (!attributes.is_object()) return InvalidArgument("attributes: expected a JSON object");
  auto hold = store_.node_locks().Share(path_);
  std::lock_guard lock(metadata_mutex_);
  ZARRD_RETURN_IF_ERROR(CheckCurrent(hold.before(), *metadata_, nullptr));
  auto next = std::make_shared<ArrayMetadata>(*metadata_);
  next->attributes = attributes;
  ZARRD_RETURN_IF_ERROR(WriteMetadata(*next));
  metadata_ = std::move(next);
  return OkStatus();
}

Status Array::Read(const Selection& selection, void* out, size_t out_size,
                   const IoOptions& options) const {
  auto m = metadata();
  auto resolved = ResolveSelection(selection, m->shape);
  if (!resolved.ok()) return resolved.status().WithContext("array " + Quoted(path_));
  return ReadResolved(*resolved, out, out_size, options);
}

Status Array::ReadResolved(const ResolvedSelection& resolved, void* out, size_t out_size,
                           const IoOptions& options) const {
  auto m = metadata();
  if (resolved.dims.size() != m->rank()) {
    return InvalidArgument("array " + Quoted(path_) + ": selection rank does not match");
  }
  const size_t need = static_cast<size_t>(resolved.num_elements()) * ItemSize(m->dtype);
  if (out_size != need) {
    return InvalidArgument("array " + Quoted(path_) + ": result buffer holds " +
                           std::to_string(out_size) + " bytes, the selection needs " +
                           std::to_string(need));
  }
  if (need == 0) return OkStatus();
  HostSink sink(static_cast<uint8_t*>(out), ItemSize(m->dtype), options.result_shared);
  return ReadToSink(resolved, sink, options);
}

Status Array::ReadToSink(const ResolvedSelection& resolved, ChunkSink& sink,
                         const IoOptions& options) const {
  auto hold = store_.node_locks().Share(path_);
  auto m = metadata();
  if (resolved.dims.size() != m->rank()) {
    return InvalidArgument("array " + Quoted(path_) + ": selection rank does not match");
  }
  Status s = CheckCurrent(hold.before(), *m, &resolved);
  const PartialDecoder* partial = m->codec_chain->partial_decoder();
  s = !s.ok()                        ? s
      : resolved.num_elements() == 0 ? OkStatus()
      : partial                      ? ReadParts(*m, *partial, resolved, sink, options)
                                     : ReadChunks(*m, resolved, sink, options);
  Status finished = sink.Finish();
  return s.ok() ? finished : s;
}

Status Array::ReadChunks(const ArrayMetadata& m, const ResolvedSelection& sel, ChunkSink& sink,
                         const IoOptions& options) const {
  ThreadPool& pool = options.pool ? *options.pool : ThreadPool::Default();
  ZARRD_ASSIGN_OR_RETURN(const ChunkSpec spec, EngineSpec(m, options));
  const size_t es = ItemSize(m.dtype);
  const bool raw = IsRawChain(m) && spec.num_bytes() > 0;
  DeviceResidentStore* device = AsDeviceResident(*store_);
  if (device && !sink.accepts_device_values(device->device())) device = nullptr;
  const bool raw_into_buffer = raw && sink.reads_raw_chunks_into_buffers();
  ChunkSelection chunks(sel, m.chunk_shape, es);
  sink.Start(chunks.num_chunks());
  const std::optional<GpuChain> gpu =
      raw ? std::nullopt : GpuChainFor(*m.codec_chain, m.dtype, sink);
  auto encoded_chunk = [&](GpuCodec codec, const std::string& key) {
    return EncodedChunkFor(*gpu, codec, spec, key);
  };
  return pool.ParallelFor(
      chunks.num_chunks(),
      [&](size_t n) -> Status {
        auto parts = chunks.Parts(n);
        const std::string key = ChunkStoreKey(m, chunks.ChunkIndex(parts));
        const Placement p = chunks.Place(parts);
        // Where a chunk decoded on the GPU goes: its decoded bytes keep the stored order.
        auto stored_place = [&] {
          return gpu->dimension_order.empty() ? p : chunks.Place(parts, gpu->dimension_order);
        };
        if (device && (raw || gpu)) {
          // Chunks in GPU memory: raw ones are copied into place, encoded ones decoded there
          // (unless their format needs the CPU: then they come to the host below).
          auto value = device->GetDevice(key);
          if (!value.ok()) return Context(value.status(), key);
          if (!*value) return sink.Fill(p, m.fill_value.data(), es);
          const DeviceValue& v = **value;
          if (raw) {
            if (v.size != spec.num_bytes()) {
              return Context(DataLoss("raw chunk holds " + std::to_string(v.size) +
                                      " bytes, expected " + std::to_string(spec.num_bytes())),
                             key);
            }
            return Context(sink.CommitDevice(p, v), key);
          }
          if (v.size > m.max_encoded_chunk_bytes()) {
            return Context(OversizedValue("the stored chunk", v.size, m.max_encoded_chunk_bytes()),
                           key);
          }
          if (std::optional<GpuCodec> codec =
                  GpuCodecFor(*gpu, v.head(), v.size, spec.num_bytes())) {
            return Context(sink.CommitEncodedDevice(stored_place(), v, encoded_chunk(*codec, key)),
                           key);
          }
        }
        if (raw_into_buffer) {
          return Context(
              ReadRawInto(*store_, sink, p, key, spec.num_bytes(), m.fill_value.data(), es), key);
        }
        Bytes& encoded = ThreadBuffer(0);
        auto found = store_->GetBounded(key, m.max_encoded_chunk_bytes(), &encoded);
        if (!found.ok()) return Context(found.status(), key);
        if (!*found) {
          GlobalEngineStats().chunks_filled.fetch_add(1, std::memory_order_relaxed);
          return sink.Fill(p, m.fill_value.data(), es);
        }
        if (std::optional<GpuCodec> codec =
                gpu && !sink.encoded_would_wait()
                    ? GpuCodecFor(*gpu, encoded, encoded.size(), spec.num_bytes())
                    : std::nullopt) {
          return Context(sink.CommitEncoded(stored_place(), encoded, encoded_chunk(*codec, key)),
                         key);
        }
        return Context(DecodeInto(sink, p, *m.codec_chain, spec, encoded), key);
      },
      options.cancelled, [&] { return sink.LeaveThread(); });
}

bool Array::HasGpuChain() const {
  auto m = metadata();
  const PartialDecoder* partial = m->codec_chain->partial_decoder();
  return PlanGpuChain(partial ? partial->part_codecs() : *m->codec_chain, m->dtype).has_value();
}

std::optional<GpuChain> Array::GpuChainFor(const CodecChain& codecs, DataType dtype,
                                           const ChunkSink& sink) {
  std::optional<GpuChain> gpu = PlanGpuChain(codecs, dtype);
  if (gpu && !sink.accepts_encoded(gpu->kind)) gpu.reset();
  return gpu;
}

ChunkSink::EncodedChunk Array::EncodedChunkFor(const GpuChain& gpu, GpuCodec codec,
                                               const ChunkSpec& spec,
                                               const std::string& key) const {
  GlobalEngineStats().chunks_gpu_decoded.fetch_add(1, std::memory_order_relaxed);
  return ChunkSink::EncodedChunk{.codec = codec,
                                 .swap_unit = gpu.swap_unit,
                                 .crc32c = gpu.crc32c,
                                 .decoded_bytes = spec.num_bytes(),
                                 .where = ChunkName(key)};
}

Status Array::ReadParts(const ArrayMetadata& m, const PartialDecoder& decoder,
                        const ResolvedSelection& sel, ChunkSink& sink,
                        const IoOptions& options) const {
  ThreadPool& pool = options.pool ? *options.pool : ThreadPool::Default();
  ZARRD_ASSIGN_OR_RETURN(const ChunkSpec spec, EngineSpec(m, options));
  const ChunkSpec part_spec = decoder.PartSpec(spec);
  const size_t es = ItemSize(m.dtype);
  ChunkSelection parts(sel, decoder.part_shape(), es);

  // Group the touched parts by chunk; what locates a chunk's parts is read once.
  struct Chunk {
    std::string key;
    std::unique_ptr<ChunkParts> parts;  // null: the chunk is absent
  };
  std::vector<Chunk> chunks;
  std::map<std::vector<int64_t>, size_t> chunk_of;
  struct Part {
    size_t chunk;
    size_t position;
  };
  std::vector<Part> located(parts.num_chunks());
  for (size_t n = 0; n < parts.num_chunks(); ++n) {
    auto location = decoder.Locate(parts.ChunkIndex(parts.Parts(n)));
    auto [it, added] = chunk_of.try_emplace(location.chunk, chunks.size());
    if (added) chunks.push_back({ChunkStoreKey(m, location.chunk), nullptr});
    located[n] = {it->second, location.position};
  }

  ZARRD_RETURN_IF_ERROR(pool.ParallelFor(
      chunks.size(),
      [&](size_t c) -> Status {
        Chunk& chunk = chunks[c];
        auto opened =
            decoder.Open([store = &*store_, key = chunk.key](ByteRange range, Bytes* out) {
              return store->GetRange(key, range, out);
            });
        if (!opened.ok()) return Context(opened.status(), chunk.key);
        chunk.parts = std::move(*opened);
        return OkStatus();
      },
      options.cancelled));

  sink.Start(parts.num_chunks());
  const std::optional<GpuChain> gpu = GpuChainFor(decoder.part_codecs(), m.dtype, sink);
  return pool.ParallelFor(
      parts.num_chunks(),
      [&](size_t n) -> Status {
        const std::vector<ChunkDimPart> part = parts.Parts(n);
        const Placement p = parts.Place(part);
        const Chunk& chunk = chunks[located[n].chunk];
        const size_t pos = located[n].position;
        if (!chunk.parts || chunk.parts->empty(pos)) {
          return sink.Fill(p, m.fill_value.data(), es);
        }
        const std::string where = chunk.key + "' inner chunk '" + std::to_string(pos);
        Bytes& encoded = ThreadBuffer(0);
        ZARRD_RETURN_IF_ERROR(Context(chunk.parts->Read(pos, &encoded), where));
        if (std::optional<GpuCodec> codec =
                gpu && !sink.encoded_would_wait()
                    ? GpuCodecFor(*gpu, encoded, encoded.size(), part_spec.num_bytes())
                    : std::nullopt) {
          const Placement stored =
              gpu->dimension_order.empty() ? p : parts.Place(part, gpu->dimension_order);
          return Context(
              sink.CommitEncoded(stored, encoded, EncodedChunkFor(*gpu, *codec, part_spec, where)),
              where);
        }
        return Context(DecodeInto(sink, p, decoder.part_codecs(), part_spec, encoded), where);
      },
      options.cancelled, [&] { return sink.LeaveThread(); });
}

Status Array::Write(const Selection& selection, const void* in, size_t in_size,
                    const IoOptions& options) {
  auto m = metadata();
  auto sel = ResolveSelection(selection, m->shape);
  if (!sel.ok()) return sel.status().WithContext("array " + Quoted(path_));
  HostSource source(static_cast<const uint8_t*>(in), in_size, ItemSize(m->dtype));
  return WriteFromSource(*sel, source, options);
}

Status Array::WriteFromSource(const ResolvedSelection& sel, ChunkSource& source,
                              const IoOptions& options) {
  auto hold = store_.node_locks().Share(path_);
  auto m = metadata();
  if (sel.dims.size() != m->rank()) {
    return InvalidArgument("array " + Quoted(path_) + ": selection rank does not match");
  }
  ZARRD_RETURN_IF_ERROR(CheckCurrent(hold.before(), *m, &sel));
  const size_t es = ItemSize(m->dtype);
  const uint64_t need = sel.num_bytes(es);
  if (source.nbytes() != need) {
    return InvalidArgument("array " + Quoted(path_) + ": input holds " +
                           std::to_string(source.nbytes()) + " bytes, the selection needs " +
                           std::to_string(need));
  }
  if (need == 0) return OkStatus();
  ThreadPool& pool = options.pool ? *options.pool : ThreadPool::Default();
  ZARRD_ASSIGN_OR_RETURN(const ChunkSpec spec, EngineSpec(*m, options));
  ChunkSelection chunks(sel, m->chunk_shape, es);
  return pool.ParallelFor(
      chunks.num_chunks(),
      [&](size_t n) -> Status {
        auto parts = chunks.Parts(n);
        const std::string key = ChunkStoreKey(*m, chunks.ChunkIndex(parts));
        const Placement p = chunks.Place(parts);
        const size_t rank = p.counts.size();
        auto lock = store_.key_locks().Lock(key);
        Bytes& chunk = ThreadBuffer(1);
        chunk.resize(spec.num_bytes());
        if (!p.covers_chunk) {
          Bytes& old = ThreadBuffer(0);
          auto found = store_->GetBounded(key, m->max_encoded_chunk_bytes(), &old);
          if (!found.ok()) return Context(found.status(), key);
          if (*found) {
            ZARRD_RETURN_IF_ERROR(Context(m->codec_chain->Decode(spec, old, chunk.data()), key));
          } else {
            auto strides = COrderStrides(spec.shape, es);
            StridedFill(chunk.data(), strides.data(), spec.shape.data(), rank, m->fill_value.data(),
                        es);
          }
        }
        ZARRD_RETURN_IF_ERROR(Context(source.Gather(p, chunk.data()), key));
        if (AllFill(chunk.data(), chunk.size() / es, m->fill_value, m->dtype)) {
          return Context(store_->Delete(key), key);
        }
        Bytes& encoded = ThreadBuffer(2);
        ZARRD_RETURN_IF_ERROR(Context(m->codec_chain->Encode(spec, chunk.data(), &encoded), key));
        GlobalEngineStats().chunks_encoded.fetch_add(1, std::memory_order_relaxed);
        return Context(store_->Set(key, encoded), key);
      },
      options.cancelled);
}

Result<Array::ChunkEdits> Array::PlanTrim(const ArrayMetadata& m,
                                          const std::vector<std::string>& keys,
                                          const std::vector<int64_t>& bound,
                                          const ChunkEdits& base) const {
  const std::string prefix = path_.empty() ? "" : path_ + "/";
  const size_t rank = m.rank();
  const size_t es = ItemSize(m.dtype);
  ChunkSpec spec = m.chunk_spec();
  const auto strides = COrderStrides(spec.shape, es);
  ChunkEdits edits;
  Bytes stored, chunk, before;
  for (const std::string& key : keys) {
    auto index = m.ParseChunkKey(std::string_view(key).substr(prefix.size()));
    if (!index) continue;
    auto in_base = base.find(key);
    if (in_base != base.end() && !in_base->second) continue;  // deleted already
    bool outside = false, cut = false;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t start = (*index)[d] * m.chunk_shape[d];
      outside |= start >= bound[d];
      cut |= start + m.chunk_shape[d] > bound[d];
    }
    if (outside) {
      edits[key] = std::nullopt;
      continue;
    }
    if (!cut) continue;
    const Bytes* encoded = in_base != base.end() ? &*in_base->second : nullptr;
    if (!encoded) {
      auto found = store_->GetBounded(key, m.max_encoded_chunk_bytes(), &stored);
      if (!found.ok()) return Context(found.status(), key);
      if (!*found) continue;
      encoded = &stored;
    }
    // String arrays: one trimmed chunk's strings at a time, as a read of that chunk holds them.
    StringArena strings;
    spec.strings = &strings;
    chunk.resize(spec.num_bytes());
    ZARRD_RETURN_IF_ERROR(Context(m.codec_chain->Decode(spec, *encoded, chunk.data()), key));
    before = chunk;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t keep = bound[d] - (*index)[d] * m.chunk_shape[d];
      if (keep >= m.chunk_shape[d]) continue;
      std::vector<int64_t> counts = spec.shape;
      counts[d] -= keep;
      StridedFill(chunk.data() + keep * strides[d], strides.data(), counts.data(), rank,
                  m.fill_value.data(), es);
    }
    if (chunk == before) continue;
    if (AllFill(chunk.data(), chunk.size() / es, m.fill_value, m.dtype)) {
      edits[key] = std::nullopt;
      continue;
    }
    Bytes trimmed;
    ZARRD_RETURN_IF_ERROR(Context(m.codec_chain->Encode(spec, chunk.data(), &trimmed), key));
    edits[key] = std::move(trimmed);
  }
  return edits;
}

Status Array::ApplyEdits(const ChunkEdits& edits) {
  for (const auto& [key, value] : edits) {
    ZARRD_RETURN_IF_ERROR(Context(value ? store_->Set(key, *value) : store_->Delete(key), key));
  }
  return OkStatus();
}

Status Array::Resize(const std::vector<int64_t>& shape, const IoOptions&) {
  auto hold = store_.node_locks().Own(path_);
  auto old = metadata();
  ZARRD_RETURN_IF_ERROR(CheckCurrent(hold.before(), *old, nullptr));
  // Until the metadata write, a failure leaves the array as it was, and this handle current.
  auto unchanged = [&](const Status& s) {
    generation_ = hold.after();
    return s;
  };
  const std::string where = "array " + Quoted(path_);
  if (shape.size() != old->rank()) {
    return unchanged(InvalidArgument(where + ": resize to " + std::to_string(shape.size()) +
                                     " dimensions, the array has " + std::to_string(old->rank())));
  }
  ArrayMetadata next = *old;
  next.shape = shape;
  Status valid = next.Finalize();
  if (!valid.ok()) return unchanged(valid.WithContext(where));
  // Walk the chunks that exist (not the grid, which may be astronomically large). Everything
  // that can fail (reading, decoding, encoding) happens before the first change. Parts outside
  // the old shape (left by a resize that crashed after its metadata write) are cleared first:
  // nobody sees them yet. Parts outside the new shape are cleared once the new shape is written.
  const std::string prefix = path_.empty() ? "" : path_ + "/";
  auto keys = store_->List(prefix);
  if (!keys.ok()) return unchanged(keys.status());
  auto outside_old = PlanTrim(*old, *keys, old->shape, {});
  if (!outside_old.ok()) return unchanged(outside_old.status());
  std::vector<int64_t> kept(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) kept[d] = std::min(shape[d], old->shape[d]);
  auto outside_new = PlanTrim(*old, *keys, kept, *outside_old);
  if (!outside_new.ok()) return unchanged(outside_new.status());
  // Changes only what no reader of the old shape sees; a failure leaves the handle stale.
  ZARRD_RETURN_IF_ERROR(ApplyEdits(*outside_old));
  {
    std::lock_guard lock(metadata_mutex_);
    ZARRD_RETURN_IF_ERROR(WriteMetadata(next));
    metadata_ = std::make_shared<const ArrayMetadata>(std::move(next));
  }
  generation_ = hold.after();
  Status cleared = ApplyEdits(*outside_new);
  if (!cleared.ok()) {
    return cleared.WithContext(where + ": resized, but clearing chunks outside the new shape " +
                               "failed (the next resize clears them)");
  }
  return OkStatus();
}

}  // namespace zarrd
