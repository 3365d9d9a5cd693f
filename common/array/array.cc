#include "common/array/array.h"

#include <algorithm>
#include <map>

#include "common/array/engine_stats.h"
#include "common/array/thread_buffers.h"
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

// Hands an encoded chunk over to the sink (its GPU decodes it), or decodes it here when the GPU
// had no memory for it and the sink's policy lets the CPUs take its chunks instead.
Status CommitEncodedOrDecode(ChunkSink& sink, const Placement& stored, const Placement& p,
                             ByteView encoded, ChunkSink::EncodedChunk chunk,
                             const CodecChain& chain, const ChunkSpec& spec) {
  Status s = sink.CommitEncoded(stored, encoded, std::move(chunk));
  if (s.code() == StatusCode::kResourceExhausted && sink.encoded_would_wait()) {
    return DecodeInto(sink, p, chain, spec, encoded);
  }
  if (s.ok()) GlobalEngineStats().chunks_gpu_decoded.fetch_add(1, std::memory_order_relaxed);
  return s;
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
    return Status(StatusCode::kAborted, ArrayName(path_) +
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
                    ArrayName(path_) +
                        " was resized while the request was prepared; resolve its selection again");
    }
  }
  return OkStatus();
}

std::shared_ptr<const ArrayMetadata> Array::metadata() const {
  std::lock_guard lock(metadata_mutex_);
  return metadata_;
}

std::string ArrayName(const std::string& path) {
  return "array '" + (path.empty() ? "/" : path) + "'";
}

std::string Array::ChunkName(const std::string& key) const {
  return ArrayName(path_) + " chunk '" + key + "'";
}

Status Array::Context(const Status& status, const std::string& key) const {
  return status.WithContext(ChunkName(key));
}

Result<ChunkSpec> Array::EngineSpec(const ArrayMetadata& m, const IoOptions& options) const {
  ChunkSpec spec = m.chunk_spec();
  if (IsStringType(m.dtype)) {
    if (!options.strings) {
      return InvalidArgument(ArrayName(path_) + " holds strings (" + m.result_typestr() +
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
  const std::string where = ArrayName(path);
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
  const std::string where = ArrayName(path);
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
  if (!resolved.ok()) return resolved.status().WithContext(ArrayName(path_));
  return ReadResolved(*resolved, out, out_size, options);
}

Status Array::ReadResolved(const ResolvedSelection& resolved, void* out, size_t out_size,
                           const IoOptions& options) const {
  auto m = metadata();
  if (resolved.dims.size() != m->rank()) {
    return InvalidArgument(ArrayName(path_) + ": selection rank does not match");
  }
  const size_t need = static_cast<size_t>(resolved.num_elements()) * ItemSize(m->dtype);
  if (out_size != need) {
    return InvalidArgument(ArrayName(path_) + ": result buffer holds " + std::to_string(out_size) +
                           " bytes, the selection needs " + std::to_string(need));
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
    return InvalidArgument(ArrayName(path_) + ": selection rank does not match");
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
            Status s = sink.CommitEncodedDevice(stored_place(), v, encoded_chunk(*codec, key));
            // With no GPU memory for it under auto, the chunk comes to the host below and the
            // CPUs decode it.
            if (s.code() != StatusCode::kResourceExhausted || !sink.encoded_would_wait()) {
              if (s.ok()) {
                GlobalEngineStats().chunks_gpu_decoded.fetch_add(1, std::memory_order_relaxed);
              }
              return Context(s, key);
            }
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
          return Context(CommitEncodedOrDecode(sink, stored_place(), p, encoded,
                                               encoded_chunk(*codec, key), *m.codec_chain, spec),
                         key);
        }
        return Context(DecodeInto(sink, p, *m.codec_chain, spec, encoded), key);
      },
      options.cancelled, [&] { return sink.LeaveThread(); });
}

bool Array::DecodesOnGpu(const ResolvedSelection& selection, const GpuDecodePolicy& policy) const {
  auto m = metadata();
  const PartialDecoder* partial = m->codec_chain->partial_decoder();
  const std::optional<GpuChain> gpu =
      PlanGpuChain(partial ? partial->part_codecs() : *m->codec_chain, m->dtype);
  if (!gpu || selection.dims.size() != m->rank()) return false;
  const ChunkSelection chunks(selection, partial ? partial->part_shape() : m->chunk_shape,
                              ItemSize(m->dtype));
  return policy.Use(chunks.num_chunks(), gpu->kind);
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
          return Context(CommitEncodedOrDecode(sink, stored, p, encoded,
                                               EncodedChunkFor(*gpu, *codec, part_spec, where),
                                               decoder.part_codecs(), part_spec),
                         where);
        }
        return Context(DecodeInto(sink, p, decoder.part_codecs(), part_spec, encoded), where);
      },
      options.cancelled, [&] { return sink.LeaveThread(); });
}

}  // namespace zarrd
