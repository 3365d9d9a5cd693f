// libFuzzer target: numpy-style selection text against a small array. Three bytes give the
// shape, three the chunk shape, the rest is the text. What resolves must split into chunk parts
// that cover exactly the selected elements, each inside its chunk, and print back to text that
// resolves the same.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/chunk_selection.h"
#include "common/selection.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zarrd;
  if (size < 6) return 0;
  const std::vector<int64_t> shape = {data[0], data[1] % 64, data[2] % 16};
  const std::vector<int64_t> chunks = {1 + data[3] % 32, 1 + data[4] % 8, 1 + data[5] % 4};
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
