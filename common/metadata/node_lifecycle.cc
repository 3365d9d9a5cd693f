#include "common/metadata/node_lifecycle.h"

#include <algorithm>
#include <optional>

#include "common/metadata/json_document.h"

namespace zarrd {

namespace {

std::string Quoted(const std::string& path) { return "'" + (path.empty() ? "/" : path) + "'"; }

Result<bool> IsArray(Store& store, const std::string& path) {
  Bytes probe;
  ZARRD_ASSIGN_OR_RETURN(bool v2, store.Get(JoinKey(path, ".zarray"), &probe));
  if (v2) return true;
  ZARRD_ASSIGN_OR_RETURN(auto v3, ReadJsonDocument(store, JoinKey(path, "zarr.json")));
  return v3 && v3->is_object() && v3->value("node_type", "") == "array";
}

// The nearest proper ancestor of `path` that is an array, if any.
Result<std::optional<std::string>> ArrayAbove(Store& store, const std::string& path) {
  if (path.empty()) return std::optional<std::string>();
  std::vector<std::string> ancestors{""};
  for (size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    ancestors.push_back(path.substr(0, slash));
  }
  for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it) {
    ZARRD_ASSIGN_OR_RETURN(bool array, IsArray(store, *it));
    if (array) return std::optional<std::string>(*it);
  }
  return std::optional<std::string>();
}

std::string PrefixOf(const std::string& path) { return path.empty() ? "" : path + "/"; }

}  // namespace

Status CheckNoArrayAbove(Store& store, const std::string& path, const std::string& what) {
  ZARRD_ASSIGN_OR_RETURN(auto array, ArrayAbove(store, path));
  if (!array) return OkStatus();
  return FailedPrecondition(what + " " + Quoted(path) + ": " + Quoted(*array) +
                            " is an array; no node can be created inside an array");
}

Status ClearForNewNode(Store& store, const std::string& path, const std::string& what) {
  ZARRD_ASSIGN_OR_RETURN(auto keys, store.List(PrefixOf(path)));
  for (const auto& key : keys) {
    if (IsNodeDocumentKey(key)) {
      return AlreadyExists(what + " " + Quoted(path) + ": a node exists below it ('" + key + "')");
    }
  }
  return DeleteKeysMetadataFirst(store, keys);
}

Status DeleteKeysMetadataFirst(Store& store, const std::vector<std::string>& keys) {
  for (const auto& key : keys) {
    if (IsNodeDocumentKey(key)) ZARRD_RETURN_IF_ERROR(store.Delete(key));
  }
  for (const auto& key : keys) {
    if (!IsNodeDocumentKey(key)) ZARRD_RETURN_IF_ERROR(store.Delete(key));
  }
  return OkStatus();
}

Result<size_t> DeleteNode(const StoreHandle& handle, const std::string& path) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "node path"));
  auto hold = handle.node_locks().Own(path);
  Store& store = *handle;
  ZARRD_ASSIGN_OR_RETURN(auto array, ArrayAbove(store, path));
  if (array) {
    return NotFound("no node at " + Quoted(path) + ": it is inside array " + Quoted(*array));
  }
  ZARRD_ASSIGN_OR_RETURN(auto keys, store.List(PrefixOf(path)));
  if (std::none_of(keys.begin(), keys.end(), IsNodeDocumentKey)) {
    return NotFound("no node at " + Quoted(path) + " in " + store.Describe());
  }
  ZARRD_RETURN_IF_ERROR(DeleteKeysMetadataFirst(store, keys));
  return keys.size();
}

}  // namespace zarrd
