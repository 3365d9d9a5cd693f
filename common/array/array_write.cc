// Array's writes: chunks read, modified and re-encoded in parallel (WriteFromSource), and the
// resize that trims chunks past the new shape.
#include <algorithm>

#include "common/array/array.h"
#include "common/array/engine_stats.h"
#include "common/array/thread_buffers.h"
#include "common/index/chunk_selection.h"
#include "common/kvstore/store_handle.h"
#include "common/util/strided_copy.h"

namespace zarrd {

Status Array::Write(const Selection& selection, const void* in, size_t in_size,
                    const IoOptions& options) {
  auto m = metadata();
  auto sel = ResolveSelection(selection, m->shape);
  if (!sel.ok()) return sel.status().WithContext(ArrayName(path_));
  HostSource source(static_cast<const uint8_t*>(in), in_size, ItemSize(m->dtype));
  return WriteFromSource(*sel, source, options);
}

Status Array::WriteFromSource(const ResolvedSelection& sel, ChunkSource& source,
                              const IoOptions& options) {
  auto hold = store_.node_locks().Share(path_);
  auto m = metadata();
  if (sel.dims.size() != m->rank()) {
    return InvalidArgument(ArrayName(path_) + ": selection rank does not match");
  }
  ZARRD_RETURN_IF_ERROR(CheckCurrent(hold.before(), *m, &sel));
  const size_t es = ItemSize(m->dtype);
  const uint64_t need = sel.num_bytes(es);
  if (source.nbytes() != need) {
    return InvalidArgument(ArrayName(path_) + ": input holds " + std::to_string(source.nbytes()) +
                           " bytes, the selection needs " + std::to_string(need));
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
        auto lock = store_.key_locks().Lock(key);
        Bytes& chunk = ThreadBuffer(1);
        chunk.resize(spec.num_bytes());
        if (!p.covers_chunk) {
          ZARRD_RETURN_IF_ERROR(LoadChunk(*m, spec, key, ThreadBuffer(0), chunk.data()));
        }
        ZARRD_RETURN_IF_ERROR(Context(source.Gather(p, chunk.data()), key));
        return StoreChunk(*m, spec, key, chunk, ThreadBuffer(2));
      },
      options.cancelled);
}

Status Array::LoadChunk(const ArrayMetadata& m, const ChunkSpec& spec, const std::string& key,
                        Bytes& encoded, uint8_t* chunk) const {
  auto found = store_->GetBounded(key, m.max_encoded_chunk_bytes(), &encoded);
  if (!found.ok()) return Context(found.status(), key);
  if (*found) return Context(m.codec_chain->Decode(spec, encoded, chunk), key);
  const size_t es = ItemSize(m.dtype);
  const auto strides = COrderStrides(spec.shape, es);
  StridedFill(chunk, strides.data(), spec.shape.data(), spec.shape.size(), m.fill_value.data(), es);
  return OkStatus();
}

Status Array::StoreChunk(const ArrayMetadata& m, const ChunkSpec& spec, const std::string& key,
                         const Bytes& chunk, Bytes& encoded) const {
  if (AllFill(chunk.data(), chunk.size() / ItemSize(m.dtype), m.fill_value, m.dtype)) {
    return Context(store_->Delete(key), key);
  }
  ZARRD_RETURN_IF_ERROR(Context(m.codec_chain->Encode(spec, chunk.data(), &encoded), key));
  GlobalEngineStats().chunks_encoded.fetch_add(1, std::memory_order_relaxed);
  return Context(store_->Set(key, encoded), key);
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
  const std::string where = ArrayName(path_);
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
