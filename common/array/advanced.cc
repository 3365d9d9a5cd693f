// Advanced selections in the engine: the requested indices are grouped by chunk along each result
// axis, each touched chunk is decoded once, and its elements are scattered to (or, for writes,
// gathered from) every result position that names them, repeats included.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "common/array/array.h"
#include "common/array/engine_stats.h"
#include "common/array/thread_buffers.h"
#include "common/kvstore/store_handle.h"
#include "common/util/strided_copy.h"

namespace zarrd {
namespace {

// The positions of one result axis that fall in one chunk (along the axis's dimensions).
struct AxisGroup {
  std::vector<int64_t> chunk;       // chunk index per dimension of the axis
  std::vector<int64_t> chunk_off;   // byte offset in the chunk, per position
  std::vector<int64_t> result_off;  // byte offset in the result, per position
};

struct Plan {
  std::vector<std::vector<AxisGroup>> groups;  // per axis
  std::vector<int64_t> fixed_chunk;            // per dimension; -1 where an axis decides
  int64_t fixed_off = 0;                       // byte offset in the chunk of the fixed dims
  size_t num_chunks = 1;
};

Plan MakePlan(const ResolvedAdvanced& sel, const std::vector<int64_t>& chunk_shape, size_t es) {
  const size_t rank = chunk_shape.size();
  const auto chunk_strides = COrderStrides(chunk_shape, es);
  std::vector<int64_t> lengths;
  for (const auto& axis : sel.axes) lengths.push_back(axis.length);
  const auto result_strides = COrderStrides(lengths, es);
  Plan plan;
  plan.fixed_chunk.assign(rank, -1);
  for (size_t d = 0; d < rank; ++d) {
    if (sel.fixed[d] < 0) continue;
    plan.fixed_chunk[d] = sel.fixed[d] / chunk_shape[d];
    plan.fixed_off += (sel.fixed[d] % chunk_shape[d]) * chunk_strides[d];
  }
  for (size_t a = 0; a < sel.axes.size(); ++a) {
    const AdvancedAxis& axis = sel.axes[a];
    const size_t nd = axis.dims.size();
    std::vector<std::vector<int64_t>> chunk_of(nd);
    for (size_t j = 0; j < nd; ++j) {
      const int64_t c = chunk_shape[axis.dims[j]];
      chunk_of[j].resize(axis.length);
      for (int64_t k = 0; k < axis.length; ++k) chunk_of[j][k] = axis.coords[j][k] / c;
    }
    std::vector<int64_t> order(axis.length);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      for (size_t j = 0; j < nd; ++j) {
        if (chunk_of[j][x] != chunk_of[j][y]) return chunk_of[j][x] < chunk_of[j][y];
      }
      return false;
    });
    std::vector<AxisGroup> groups;
    for (int64_t k : order) {
      bool same = !groups.empty();
      for (size_t j = 0; same && j < nd; ++j) same = groups.back().chunk[j] == chunk_of[j][k];
      if (!same) {
        groups.emplace_back();
        for (size_t j = 0; j < nd; ++j) groups.back().chunk.push_back(chunk_of[j][k]);
      }
      int64_t off = 0;
      for (size_t j = 0; j < nd; ++j) {
        const size_t d = axis.dims[j];
        off += (axis.coords[j][k] - chunk_of[j][k] * chunk_shape[d]) * chunk_strides[d];
      }
      groups.back().chunk_off.push_back(off);
      groups.back().result_off.push_back(k * result_strides[a]);
    }
    plan.num_chunks *= groups.size();
    plan.groups.push_back(std::move(groups));
  }
  return plan;
}

// Every element offset the plan can form stays inside the result (`out_size` bytes) and a chunk
// (`chunk_bytes`): the copies go to memory no sanitizer watches (a client's shared memory).
Status CheckPlanBounds(const Plan& plan, size_t es, size_t out_size, size_t chunk_bytes) {
  int64_t result_end = static_cast<int64_t>(es), chunk_end = plan.fixed_off + es;
  for (const auto& groups : plan.groups) {
    int64_t result_max = 0, chunk_max = 0;
    for (const auto& g : groups) {
      for (int64_t r : g.result_off) result_max = std::max(result_max, r);
      for (int64_t c : g.chunk_off) chunk_max = std::max(chunk_max, c);
    }
    result_end += result_max;
    chunk_end += chunk_max;
  }
  if (result_end > static_cast<int64_t>(out_size) ||
      chunk_end > static_cast<int64_t>(chunk_bytes)) {
    return Internal("advanced selection plan reaches byte " + std::to_string(result_end) +
                    " of a " + std::to_string(out_size) + "-byte result or " +
                    std::to_string(chunk_end) + " of a " + std::to_string(chunk_bytes) +
                    "-byte chunk");
  }
  return OkStatus();
}

// The groups of the n-th touched chunk (C order over the axes' groups) and its chunk index.
std::vector<const AxisGroup*> ChunkGroups(const Plan& plan, const ResolvedAdvanced& sel, size_t n,
                                          std::vector<int64_t>* index) {
  std::vector<const AxisGroup*> out(plan.groups.size());
  *index = plan.fixed_chunk;
  for (size_t a = plan.groups.size(); a-- > 0;) {
    out[a] = &plan.groups[a][n % plan.groups[a].size()];
    n /= plan.groups[a].size();
    for (size_t j = 0; j < sel.axes[a].dims.size(); ++j) {
      (*index)[sel.axes[a].dims[j]] = out[a]->chunk[j];
    }
  }
  return out;
}

// Calls fn(chunk_offset, result_offset) for every element of the chunk's groups, in C order of
// the result (so that, writing, the last of repeated positions wins as in numpy).
template <typename Fn>
void ForEachElement(const std::vector<const AxisGroup*>& groups, int64_t base, Fn&& fn) {
  const size_t na = groups.size();
  if (na == 0) {
    fn(base, int64_t{0});
    return;
  }
  std::vector<size_t> at(na, 0);
  std::vector<int64_t> coff(na + 1, base), roff(na + 1, 0);
  size_t a = 0;
  while (true) {
    coff[a + 1] = coff[a] + groups[a]->chunk_off[at[a]];
    roff[a + 1] = roff[a] + groups[a]->result_off[at[a]];
    if (a + 1 < na) {
      ++a;
      at[a] = 0;
      continue;
    }
    fn(coff[na], roff[na]);
    while (++at[a] == groups[a]->chunk_off.size()) {
      if (a == 0) return;
      --a;
    }
  }
}

}  // namespace

Status Array::ReadAdvanced(const ResolvedAdvanced& sel, void* out, size_t out_size,
                           const IoOptions& options) const {
  auto hold = store_.node_locks().Share(path_);
  auto m = metadata();
  const std::string where = "array '" + (path_.empty() ? "/" : path_) + "'";
  if (sel.fixed.size() != m->rank())
    return InvalidArgument(where + ": selection rank does not match");
  ZARRD_RETURN_IF_ERROR(CheckCurrent(hold.before(), *m, nullptr));
  const size_t es = ItemSize(m->dtype);
  const size_t need = static_cast<size_t>(sel.num_elements) * es;
  if (out_size != need) {
    return InvalidArgument(where + ": result buffer holds " + std::to_string(out_size) +
                           " bytes, the selection needs " + std::to_string(need));
  }
  if (need == 0) return OkStatus();
  const Plan plan = MakePlan(sel, m->chunk_shape, es);
  ZARRD_ASSIGN_OR_RETURN(const ChunkSpec spec, EngineSpec(*m, options));
  ZARRD_RETURN_IF_ERROR(CheckPlanBounds(plan, es, out_size, spec.num_bytes()).WithContext(where));
  uint8_t* result = static_cast<uint8_t*>(out);
  ThreadPool& pool = options.pool ? *options.pool : ThreadPool::Default();
  return pool.ParallelFor(
      plan.num_chunks,
      [&](size_t n) -> Status {
        std::vector<int64_t> index;
        const auto groups = ChunkGroups(plan, sel, n, &index);
        const std::string key = ChunkStoreKey(*m, index);
        Bytes& encoded = ThreadBuffer(0);
        auto found = store_->GetBounded(key, m->max_encoded_chunk_bytes(), &encoded);
        if (!found.ok()) return Context(found.status(), key);
        if (!*found) {
          GlobalEngineStats().chunks_filled.fetch_add(1, std::memory_order_relaxed);
          const uint8_t* fill = m->fill_value.data();
          ForEachElement(groups, 0, [&](int64_t, int64_t r) { std::memcpy(result + r, fill, es); });
          return OkStatus();
        }
        Bytes& chunk = ThreadBuffer(1);
        chunk.resize(spec.num_bytes());
        ZARRD_RETURN_IF_ERROR(Context(m->codec_chain->Decode(spec, encoded, chunk.data()), key));
        GlobalEngineStats().chunks_decoded.fetch_add(1, std::memory_order_relaxed);
        ForEachElement(groups, plan.fixed_off, [&](int64_t c, int64_t r) {
          std::memcpy(result + r, chunk.data() + c, es);
        });
        return OkStatus();
      },
      options.cancelled);
}

Status Array::WriteAdvanced(const ResolvedAdvanced& sel, const void* in, size_t in_size,
                            const IoOptions& options) {
  auto hold = store_.node_locks().Share(path_);
  auto m = metadata();
  const std::string where = "array '" + (path_.empty() ? "/" : path_) + "'";
  if (sel.fixed.size() != m->rank())
    return InvalidArgument(where + ": selection rank does not match");
  ZARRD_RETURN_IF_ERROR(CheckCurrent(hold.before(), *m, nullptr));
  const size_t es = ItemSize(m->dtype);
  const size_t need = static_cast<size_t>(sel.num_elements) * es;
  if (in_size != need) {
    return InvalidArgument(where + ": input holds " + std::to_string(in_size) +
                           " bytes, the selection needs " + std::to_string(need));
  }
  if (need == 0) return OkStatus();
  const Plan plan = MakePlan(sel, m->chunk_shape, es);
  ZARRD_ASSIGN_OR_RETURN(const ChunkSpec spec, EngineSpec(*m, options));
  ZARRD_RETURN_IF_ERROR(CheckPlanBounds(plan, es, in_size, spec.num_bytes()).WithContext(where));
  const uint8_t* input = static_cast<const uint8_t*>(in);
  ThreadPool& pool = options.pool ? *options.pool : ThreadPool::Default();
  return pool.ParallelFor(
      plan.num_chunks,
      [&](size_t n) -> Status {
        std::vector<int64_t> index;
        const auto groups = ChunkGroups(plan, sel, n, &index);
        const std::string key = ChunkStoreKey(*m, index);
        auto lock = store_.key_locks().Lock(key);
        Bytes& chunk = ThreadBuffer(1);
        chunk.resize(spec.num_bytes());
        ZARRD_RETURN_IF_ERROR(LoadChunk(*m, spec, key, ThreadBuffer(0), chunk.data()));
        ForEachElement(groups, plan.fixed_off,
                       [&](int64_t c, int64_t r) { std::memcpy(chunk.data() + c, input + r, es); });
        return StoreChunk(*m, spec, key, chunk, ThreadBuffer(0));
      },
      options.cancelled);
}

}  // namespace zarrd
