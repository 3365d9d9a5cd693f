// libFuzzer target: numpy-style selection text against a small array. Three bytes give the
// shape, three the chunk shape, the rest is the text. What resolves must split into chunk parts
// that cover exactly the selected elements, each inside its chunk, and print back to text that
// resolves the same. The same bytes also make an advanced selection (orthogonal or points, per
// dimension an integer, a slice, an index list or a mask) and a block selection: what resolves
// must stay within the array and agree with its result shape.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/index/advanced_selection.h"
#include "common/index/chunk_selection.h"
#include "common/index/selection.h"

namespace {

using namespace zarrd;

void CheckAdvanced(const uint8_t* data, size_t size, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& chunks) {
  size_t at = 0;
  auto next = [&]() -> int64_t { return at < size ? static_cast<int8_t>(data[at++]) : 0; };
  const bool points = next() & 1;
  const int64_t count = next() & 7;
  std::vector<AdvancedItem> items;
  for (size_t d = 0; d < shape.size(); ++d) {
    switch (next() & 3) {
      case 0:
        items.push_back(AdvancedItem::Basic(SelectionItem::Index(next())));
        break;
      case 1:
        items.push_back(AdvancedItem::Basic(SelectionItem::Slice(next(), next(), next() | 1)));
        break;
      case 2: {
        std::vector<int64_t> v(count);
        for (auto& i : v) i = next();
        items.push_back(AdvancedItem::Indices(v));
        break;
      }
      default: {
        std::vector<uint8_t> m(next() & 15);
        for (auto& b : m) b = next() & 1;
        items.push_back(AdvancedItem::Mask(m));
      }
    }
  }
  auto sel = ResolveAdvanced(items, points ? AdvancedMode::kVectorized : AdvancedMode::kOrthogonal,
                             {count}, shape, 1 << 20);
  if (sel.ok()) {
    int64_t n = 1;
    for (int64_t s : sel->result_shape) n *= s;
    int64_t axes = 1;
    for (const auto& axis : sel->axes) {
      axes *= axis.length;
      for (size_t j = 0; j < axis.dims.size() && n > 0; ++j) {
        if (static_cast<int64_t>(axis.coords[j].size()) != axis.length) std::abort();
        for (int64_t c : axis.coords[j]) {
          if (c < 0 || c >= shape[axis.dims[j]]) std::abort();
        }
      }
    }
    if (n != sel->num_elements || axes != n) std::abort();
  }
  Selection blocks;
  for (size_t d = 0; d < shape.size(); ++d) blocks.push_back(SelectionItem::Index(next()));
  auto b = BlockSelection(blocks, shape, chunks);
  if (b.ok()) {
    auto r = ResolveSelection(*b, shape);
    if (!r.ok()) std::abort();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (r->dims[d].count < 1 || r->dims[d].count > chunks[d]) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6) return 0;
  const std::vector<int64_t> shape = {data[0], data[1] % 64, data[2] % 16};
  const std::vector<int64_t> chunks = {1 + data[3] % 32, 1 + data[4] % 8, 1 + data[5] % 4};
  CheckAdvanced(data + 6, size - 6, shape, chunks);
  const std::string_view text(reinterpret_cast<const char*>(data + 6), size - 6);
  auto sel = ParseSelection(text);
  if (!sel.ok()) return 0;
  auto resolved = ResolveSelection(*sel, shape);
  if (!resolved.ok()) return 0;
  auto again = ParseSelection(SelectionToString(*sel));
  if (!again.ok()) std::abort();
  auto resolved_again = ResolveSelection(*again, shape);
  if (!resolved_again.ok() || resolved_again->result_shape != resolved->result_shape) std::abort();

  ChunkSelection split(*resolved, chunks, 4);
  int64_t covered = 0;
  for (size_t n = 0; n < split.num_chunks(); ++n) {
    const auto parts = split.Parts(n);
    int64_t elements = 1;
    for (size_t d = 0; d < parts.size(); ++d) {
      const auto& dim = resolved->dims[d];
      const auto& p = parts[d];
      if (p.k_count < 1 || p.local_first < 0 || p.local_first >= chunks[d]) std::abort();
      const int64_t last_local = p.local_first + (p.k_count - 1) * dim.step;
      if (last_local < 0 || last_local >= chunks[d]) std::abort();
      if (p.chunk * chunks[d] + p.local_first != dim.start + p.k_begin * dim.step) std::abort();
      elements *= p.k_count;
    }
    covered += elements;
  }
  if (covered != resolved->num_elements()) std::abort();
  return 0;
}
