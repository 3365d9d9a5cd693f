// libFuzzer target: the JSON documents that arrive by RPC (attributes, array and group metadata).
// What ParseJsonDocument accepts nests at most kMaxJsonDepth deep, dumps to text that parses
// again to the same document, and goes through the metadata parsers; what it refuses for depth
// really nests that deep.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/metadata/json_document.h"
#include "common/metadata/metadata.h"

namespace {

// Depth of a parsed document, measured without recursion.
size_t Depth(const nlohmann::json& root) {
  size_t deepest = 0;
  std::vector<std::pair<const nlohmann::json*, size_t>> todo = {{&root, 0}};
  while (!todo.empty()) {
    auto [j, depth] = todo.back();
    todo.pop_back();
    if (!j->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const auto& child : *j) todo.push_back({&child, depth + 1});
  }
  return deepest;
}

[[noreturn]] void Fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "%s:\n%.*s\n", what, static_cast<int>(std::min<size_t>(text.size(), 2000)),
               text.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zarrd;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = ParseJsonDocument(text, "attributes_json");
  if (!doc.ok()) {
    if (doc.status().code() != StatusCode::kInvalidArgument) Fail("wrong code", text);
    if (doc.status().message().find("deeper") != std::string::npos) {
      // nlohmann's own parser is iterative: it may build the document, which must then be deep.
      auto deep = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!deep.is_discarded() && Depth(deep) <= kMaxJsonDepth) Fail("refused as deep", text);
    }
    return 0;
  }
  if (Depth(*doc) > kMaxJsonDepth) Fail("accepted too deep", text);
  const std::string dumped = doc->dump();
  auto again = ParseJsonDocument(dumped, "dumped");
  if (!again.ok() || *again != *doc) Fail("does not parse back to itself", dumped);
  (void)ParseV3GroupMetadata(*doc);
  (void)ParseV3ArrayMetadata(*doc);
  if (doc->is_object()) (void)ParseV2ArrayMetadata(*doc, *doc);
  return 0;
}
