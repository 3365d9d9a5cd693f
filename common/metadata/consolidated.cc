#include "common/metadata/consolidated.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "common/metadata/group.h"
#include "common/metadata/json_document.h"

namespace zarrd {

using nlohmann::json;

namespace {

std::string Where(const std::string& path) { return "group '" + (path.empty() ? "/" : path) + "'"; }

std::string PrefixOf(const std::string& path) { return path.empty() ? "" : path + "/"; }

// "", "a", "a/b" for "a/b": the root, every ancestor, and the path itself.
std::vector<std::string> RootToPath(const std::string& path) {
  std::vector<std::string> out{""};
  for (size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    out.push_back(path.substr(0, slash));
  }
  if (!path.empty()) out.push_back(path);
  return out;
}

// The node (relative to the listed group, "" for the group itself) whose document `doc` the key
// remainder `rest` is: "a/b/zarr.json" -> "a/b"; nullopt for any other key.
std::optional<std::string> NodeOfDocument(std::string_view rest, std::string_view doc) {
  if (rest == doc) return std::string();
  if (rest.size() <= doc.size() + 1 || !rest.ends_with(doc) ||
      rest[rest.size() - doc.size() - 1] != '/') {
    return std::nullopt;
  }
  return std::string(rest.substr(0, rest.size() - doc.size() - 1));
}

json Inline(json metadata) {
  return {{"kind", "inline"}, {"must_understand", false}, {"metadata", std::move(metadata)}};
}

// Documents read through ReadJsonDocument nest at most kMaxStoredJsonDepth, so this recursion
// is bounded.
size_t Depth(const json& j) {
  if (!j.is_structured()) return 0;
  size_t deepest = 0;
  for (const auto& v : j) deepest = std::max(deepest, Depth(v));
  return deepest + 1;
}

bool FieldIs(const json& doc, const char* field, const json& value) {
  if (!doc.is_object()) return false;
  auto it = doc.find(field);
  return it != doc.end() && *it == value;
}

Status WriteV3Group(Store& store, const std::string& key, const json& document) {
  if (Depth(document) > kMaxStoredJsonDepth) {
    return ResourceExhausted(key + ": consolidated metadata would nest deeper than the " +
                             std::to_string(kMaxStoredJsonDepth) + " levels zarrd reads");
  }
  const std::string text = document.dump(2);
  if (text.size() > kMaxJsonDocumentBytes) {
    return ResourceExhausted(key + ": consolidated metadata of " + std::to_string(text.size()) +
                             " bytes exceeds the " + std::to_string(kMaxJsonDocumentBytes) +
                             " zarrd reads");
  }
  return store.Set(key, ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

// Rebuilds the consolidated metadata of the group at `path`. With `only_existing`, a node that
// is no group or a group without consolidated metadata is left alone (nullopt). The group's
// zarr.json key lock (SetGroupAttributes takes it too) is held from reading the group to writing,
// so rebuilds of one group run in turn and the last one has read the latest documents.
Result<std::optional<ConsolidateResult>> Consolidate(const StoreHandle& handle,
                                                     const std::string& path, bool only_existing) {
  using Out = std::optional<ConsolidateResult>;
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "group path"));
  auto hold = handle.node_locks().Share(path);
  const std::string zarr_json = JoinKey(path, "zarr.json");
  auto lock = handle.key_locks().Lock(zarr_json);
  Store& store = *handle;
  auto group = OpenGroup(store, path);
  if (!group.ok()) {
    // No group, an array, or a document nobody reads as a group: nothing to keep current. Other
    // failures (an unreachable store) may hide consolidated metadata that would go stale.
    const StatusCode code = group.status().code();
    if (only_existing &&
        (code == StatusCode::kNotFound || code == StatusCode::kFailedPrecondition ||
         code == StatusCode::kDataLoss || code == StatusCode::kInvalidArgument)) {
      return Out();
    }
    return group.status();
  }
  if (group->format == ZarrFormat::kV3) {
    if (only_existing && !group->consolidated_metadata.is_object()) return Out();
    ZARRD_ASSIGN_OR_RETURN(group->consolidated_metadata, BuildV3Consolidated(store, path));
    const size_t entries = group->consolidated_metadata["metadata"].size();
    ZARRD_RETURN_IF_ERROR(WriteV3Group(store, zarr_json, ToV3Json(*group)));
    return Out(ConsolidateResult{ZarrFormat::kV3, zarr_json, entries});
  }
  const std::string key = JoinKey(path, kV2ConsolidatedKey);
  if (only_existing) {
    Bytes existing;
    ZARRD_ASSIGN_OR_RETURN(bool found, store.Get(key, &existing));
    if (!found) return Out();
  }
  ZARRD_ASSIGN_OR_RETURN(json document, BuildV2Consolidated(store, path));
  const size_t entries = document["metadata"].size();
  ZARRD_RETURN_IF_ERROR(WriteJsonDocument(store, key, document));
  return Out(ConsolidateResult{ZarrFormat::kV2, key, entries});
}

}  // namespace

Result<json> BuildV3Consolidated(Store& store, const std::string& path) {
  const std::string prefix = PrefixOf(path);
  ZARRD_ASSIGN_OR_RETURN(auto keys, store.List(prefix));
  std::map<std::string, json> documents;
  for (const auto& key : keys) {
    auto node = NodeOfDocument(std::string_view(key).substr(prefix.size()), "zarr.json");
    if (!node || node->empty()) continue;
    ZARRD_ASSIGN_OR_RETURN(auto doc, ReadJsonDocument(store, key));
    if (!doc) continue;  // deleted since the listing
    const bool group = FieldIs(*doc, "node_type", "group");
    if (!FieldIs(*doc, "zarr_format", 3) || (!group && !FieldIs(*doc, "node_type", "array"))) {
      return DataLoss(key + ": not the zarr.json of a Zarr v3 array or group");
    }
    if (group) (*doc)["consolidated_metadata"] = Inline(json::object());
    documents.emplace(std::move(*node), std::move(*doc));
  }
  // As zarr-python walks a hierarchy: through groups only, so nothing below an array or a
  // directory without zarr.json is a member.
  std::vector<std::string> members;
  for (const auto& [node, doc] : documents) {
    bool reachable = true;
    for (size_t slash = node.find('/'); reachable && slash != std::string::npos;
         slash = node.find('/', slash + 1)) {
      auto parent = documents.find(node.substr(0, slash));
      reachable = parent != documents.end() && FieldIs(parent->second, "node_type", "group");
    }
    if (reachable) members.push_back(node);
  }
  json metadata = json::object();
  for (const auto& node : members) metadata[node] = std::move(documents[node]);
  return Inline(std::move(metadata));
}

Result<json> BuildV2Consolidated(Store& store, const std::string& path) {
  const std::string prefix = PrefixOf(path);
  ZARRD_ASSIGN_OR_RETURN(auto keys, store.List(prefix));
  json metadata = json::object();
  for (const auto& key : keys) {
    const std::string_view rest = std::string_view(key).substr(prefix.size());
    for (const char* doc : {".zarray", ".zgroup", ".zattrs"}) {
      if (!NodeOfDocument(rest, doc)) continue;
      ZARRD_ASSIGN_OR_RETURN(auto value, ReadJsonDocument(store, key));
      if (value) metadata[std::string(rest)] = std::move(*value);
    }
  }
  return json{{"zarr_consolidated_format", 1}, {"metadata", std::move(metadata)}};
}

Result<ConsolidateResult> ConsolidateMetadata(const StoreHandle& store, const std::string& path) {
  auto result = Consolidate(store, path, /*only_existing=*/false);
  if (!result.ok()) return result.status().WithContext(Where(path) + ": consolidate");
  return **result;
}

Result<std::optional<std::vector<NodeEntry>>> ListChildrenFromConsolidated(
    Store& store, const std::string& path) {
  using Out = std::optional<std::vector<NodeEntry>>;
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "group path"));
  const std::vector<std::string> groups = RootToPath(path);
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
    // `path` relative to the group, and the prefix its children's entries start with.
    const std::string below =
        it->size() == path.size() ? "" : PrefixOf(path.substr(it->empty() ? 0 : it->size() + 1));
    std::map<std::string, NodeEntry> children;
    auto add = [&](std::string_view entry, NodeEntry::Kind kind, ZarrFormat format) {
      if (!entry.starts_with(below)) return;
      entry.remove_prefix(below.size());
      if (entry.empty() || entry.find('/') != std::string_view::npos) return;
      children.try_emplace(std::string(entry), NodeEntry{std::string(entry), kind, format, ""});
    };
    ZARRD_ASSIGN_OR_RETURN(auto v3, ReadJsonDocument(store, JoinKey(*it, "zarr.json")));
    const json* metadata = nullptr;
    if (v3 && FieldIs(*v3, "node_type", "group") && (*v3)["consolidated_metadata"].is_object()) {
      metadata = &(*v3)["consolidated_metadata"]["metadata"];
    }
    if (metadata && metadata->is_object()) {
      for (const auto& [entry, doc] : metadata->items()) {
        add(entry,
            FieldIs(doc, "node_type", "array") ? NodeEntry::Kind::kArray : NodeEntry::Kind::kGroup,
            ZarrFormat::kV3);
      }
    } else if (v3) {
      continue;
    } else {
      ZARRD_ASSIGN_OR_RETURN(auto v2, ReadJsonDocument(store, JoinKey(*it, kV2ConsolidatedKey)));
      if (!v2 || !v2->is_object() || !(*v2)["metadata"].is_object()) continue;
      for (const auto& [key, doc] : (*v2)["metadata"].items()) {
        for (const char* name : {".zarray", ".zgroup"}) {
          auto node = NodeOfDocument(key, name);
          if (!node || node->empty()) continue;
          add(*node,
              name == std::string_view(".zarray") ? NodeEntry::Kind::kArray
                                                  : NodeEntry::Kind::kGroup,
              ZarrFormat::kV2);
        }
      }
    }
    std::vector<NodeEntry> out;
    for (auto& [name, entry] : children) out.push_back(std::move(entry));
    return Out(std::move(out));
  }
  return Out();
}

Status RefreshConsolidatedMetadata(const StoreHandle& store, const std::string& path) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "node path"));
  const std::vector<std::string> groups = RootToPath(path);
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
    auto result = Consolidate(store, *it, /*only_existing=*/true);
    if (!result.ok()) {
      return result.status().WithContext("refreshing the consolidated metadata of " + Where(*it));
    }
  }
  return OkStatus();
}

}  // namespace zarrd
