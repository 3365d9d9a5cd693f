#include "common/metadata/json_document.h"

#include <algorithm>

namespace zarrd {
namespace {

// The deepest nesting of arrays and objects in `text`, counted without recursion (brackets inside
// strings do not count); stops early past `limit`.
size_t NestingDepth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string_view LastComponent(std::string_view key) {
  const size_t slash = key.rfind('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

}  // namespace

bool IsNodeDocumentKey(std::string_view key) {
  const std::string_view name = LastComponent(key);
  return name == "zarr.json" || name == ".zarray" || name == ".zgroup" || name == ".zattrs";
}

bool IsMetadataDocumentKey(std::string_view key) {
  return IsNodeDocumentKey(key) || LastComponent(key) == ".zmetadata";
}

Result<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& what,
                                         StatusCode code, size_t max_depth) {
  if (text.size() > kMaxJsonDocumentBytes) {
    return Status(code, what + ": JSON document of " + std::to_string(text.size()) +
                            " bytes exceeds the limit of " + std::to_string(kMaxJsonDocumentBytes));
  }
  // nlohmann/json stops at a NUL byte as at the end of input; JSON has none outside escapes.
  if (text.find('\0') != std::string_view::npos) {
    return Status(code, what + ": not valid JSON (a NUL byte)");
  }
  if (NestingDepth(text, max_depth) > max_depth) {
    return Status(code, what + ": JSON nests deeper than " + std::to_string(max_depth) + " levels");
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status(code, what + ": not valid JSON");
  return j;
}

Result<std::optional<nlohmann::json>> ReadJsonDocument(Store& store, const std::string& key) {
  Bytes bytes;
  ZARRD_ASSIGN_OR_RETURN(bool found, store.GetBounded(key, kMaxJsonDocumentBytes, &bytes));
  if (!found) return std::optional<nlohmann::json>();
  ZARRD_ASSIGN_OR_RETURN(
      nlohmann::json j,
      ParseJsonDocument(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                        key, StatusCode::kDataLoss, kMaxStoredJsonDepth));
  return std::optional<nlohmann::json>(std::move(j));
}

Status WriteJsonDocument(Store& store, const std::string& key, const nlohmann::json& document) {
  const std::string text = document.dump(2);
  return store.Set(key, ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Result<bool> NodeExists(Store& store, const std::string& path) {
  Bytes probe;
  for (const char* doc : {"zarr.json", ".zarray", ".zgroup"}) {
    ZARRD_ASSIGN_OR_RETURN(bool exists,
                           store.GetBounded(JoinKey(path, doc), kMaxJsonDocumentBytes, &probe));
    if (exists) return true;
  }
  return false;
}

Status CheckNodePath(const std::string& path, const char* what) {
  return path.empty() ? OkStatus() : ValidateKey(path).WithContext(what);
}

}  // namespace zarrd
