// libFuzzer target: zarr.json documents (arrays and groups). What parses must write back into a
// document that parses again to the same metadata.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/metadata/json_document.h"
#include "common/metadata/metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zarrd;
  auto doc = ParseJsonDocument(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!doc.ok()) return 0;
  (void)ParseV3GroupMetadata(*doc);
  auto m = ParseV3ArrayMetadata(*doc);
  if (!m.ok()) return 0;
  const nlohmann::json written = ToV3Json(*m);
  auto again = ParseV3ArrayMetadata(written);
  if (!again.ok()) {
    std::fprintf(stderr, "written back:\n%s\ndoes not parse: %s\n", written.dump(1).c_str(),
                 again.status().ToString().c_str());
    std::abort();
  }
  if (ToV3Json(*again) != written) {
    std::fprintf(stderr, "written back:\n%s\nthen:\n%s\n", written.dump(1).c_str(),
                 ToV3Json(*again).dump(1).c_str());
    std::abort();
  }
  return 0;
}
