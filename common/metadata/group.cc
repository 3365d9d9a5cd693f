#include "common/metadata/group.h"

#include <map>

#include "common/metadata/consolidated.h"
#include "common/metadata/json_document.h"
#include "common/metadata/node_lifecycle.h"

namespace zarrd {

using nlohmann::json;

namespace {

std::string Where(const std::string& path) { return "group '" + (path.empty() ? "/" : path) + "'"; }

}  // namespace

Status CreateGroup(const StoreHandle& handle, const std::string& path,
                   const GroupMetadata& metadata) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "group path"));
  if (!metadata.attributes.is_object()) return InvalidArgument("attributes: expected an object");
  auto hold = handle.node_locks().Own(path);
  Store& store = *handle;
  ZARRD_RETURN_IF_ERROR(CheckNoArrayAbove(store, path, "group"));
  ZARRD_ASSIGN_OR_RETURN(bool exists, NodeExists(store, path));
  if (exists) return AlreadyExists(Where(path) + ": a node exists there already");
  if (metadata.format == ZarrFormat::kV3) {
    return WriteJsonDocument(store, JoinKey(path, "zarr.json"), ToV3Json(metadata));
  }
  ZARRD_RETURN_IF_ERROR(WriteJsonDocument(store, JoinKey(path, ".zgroup"), {{"zarr_format", 2}}));
  if (metadata.attributes.empty()) return OkStatus();
  return WriteJsonDocument(store, JoinKey(path, ".zattrs"), metadata.attributes);
}

Status CreateParentGroups(const StoreHandle& store, const std::string& path, ZarrFormat format) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "node path"));
  if (path.empty()) return OkStatus();
  for (size_t end = 0;; end = path.find('/', end + 1)) {
    if (end == std::string::npos) return OkStatus();
    const std::string parent = path.substr(0, end);
    auto existing = OpenGroup(*store, parent);
    if (existing.ok()) continue;
    if (existing.status().code() == StatusCode::kFailedPrecondition) {
      return FailedPrecondition("parent of '" + path + "': '" + parent +
                                "' is an array; no node can be created inside an array");
    }
    if (existing.status().code() != StatusCode::kNotFound) {
      return existing.status().WithContext("parent of '" + path + "'");
    }
    Status created = CreateGroup(store, parent, GroupMetadata{format, json::object()});
    // A concurrent create of a sibling may have made the group first: that is success.
    if (created.code() == StatusCode::kAlreadyExists) {
      ZARRD_RETURN_IF_ERROR(
          OpenGroup(*store, parent).status().WithContext("parent of '" + path + "'"));
    } else if (!created.ok()) {
      return created;
    }
  }
}

Result<GroupMetadata> OpenGroup(Store& store, const std::string& path) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "group path"));
  ZARRD_ASSIGN_OR_RETURN(auto v3, ReadJsonDocument(store, JoinKey(path, "zarr.json")));
  if (v3) {
    if (v3->is_object() && v3->value("node_type", "") == "array") {
      return FailedPrecondition(Where(path) + ": the node is an array, not a group");
    }
    auto g = ParseV3GroupMetadata(*v3);
    if (!g.ok()) return g.status().WithContext(Where(path) + " zarr.json");
    return g;
  }
  ZARRD_ASSIGN_OR_RETURN(auto zgroup, ReadJsonDocument(store, JoinKey(path, ".zgroup")));
  if (!zgroup) {
    Bytes probe;
    ZARRD_ASSIGN_OR_RETURN(bool array, store.Get(JoinKey(path, ".zarray"), &probe));
    if (array) return FailedPrecondition(Where(path) + ": the node is an array, not a group");
    return NotFound(Where(path) + ": no zarr.json or .zgroup in " + store.Describe());
  }
  if (!zgroup->is_object() || zgroup->value("zarr_format", 0) != 2) {
    return InvalidArgument(Where(path) + " .zgroup: zarr_format: expected 2");
  }
  GroupMetadata g;
  g.format = ZarrFormat::kV2;
  ZARRD_ASSIGN_OR_RETURN(auto attrs, ReadJsonDocument(store, JoinKey(path, ".zattrs")));
  if (attrs) {
    if (!attrs->is_object()) return InvalidArgument(Where(path) + " .zattrs: expected an object");
    g.attributes = *attrs;
  }
  return g;
}

Status SetGroupAttributes(const StoreHandle& handle, const std::string& path,
                          const json& attributes) {
  if (!attributes.is_object()) return InvalidArgument("attributes: expected a JSON object");
  auto hold = handle.node_locks().Share(path);  // a group deleted meanwhile is not brought back
  // Read under the lock: a concurrent re-consolidation of this group is kept
  // (common/metadata/consolidated.h).
  auto lock = handle.key_locks().Lock(JoinKey(path, "zarr.json"));
  Store& store = *handle;
  ZARRD_ASSIGN_OR_RETURN(GroupMetadata g, OpenGroup(store, path));
  g.attributes = attributes;
  if (g.format == ZarrFormat::kV3) {
    return WriteJsonDocument(store, JoinKey(path, "zarr.json"), ToV3Json(g));
  }
  return WriteJsonDocument(store, JoinKey(path, ".zattrs"), attributes);
}

Result<std::vector<NodeEntry>> ListChildren(Store& store, const std::string& path) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "group path"));
  const std::string prefix = path.empty() ? "" : path + "/";
  auto keys = store.List(prefix);
  if (!keys.ok()) {
    if (keys.status().code() != StatusCode::kUnimplemented) return keys.status();
    ZARRD_ASSIGN_OR_RETURN(auto recorded, ListChildrenFromConsolidated(store, path));
    if (!recorded) return keys.status();
    return std::move(*recorded);
  }
  std::map<std::string, NodeEntry> children;
  for (const auto& key : *keys) {
    std::string rest = key.substr(prefix.size());
    size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    std::string name = rest.substr(0, slash), doc = rest.substr(slash + 1);
    if (doc == ".zarray") {
      children.try_emplace(name, NodeEntry{name, NodeEntry::Kind::kArray, ZarrFormat::kV2, ""});
    } else if (doc == ".zgroup") {
      children.try_emplace(name, NodeEntry{name, NodeEntry::Kind::kGroup, ZarrFormat::kV2, ""});
    } else if (doc == "zarr.json") {
      auto j = ReadJsonDocument(store, key);
      if (!j.ok()) {
        children[name] =
            NodeEntry{name, NodeEntry::Kind::kGroup, ZarrFormat::kV3, j.status().ToString()};
        continue;
      }
      auto kind = *j && (*j)->is_object() && (*j)->value("node_type", "") == "array"
                      ? NodeEntry::Kind::kArray
                      : NodeEntry::Kind::kGroup;
      children[name] = NodeEntry{name, kind, ZarrFormat::kV3, ""};  // zarr.json wins over v2 files
    }
  }
  std::vector<NodeEntry> out;
  for (auto& [name, entry] : children) out.push_back(std::move(entry));
  return out;
}

}  // namespace zarrd
