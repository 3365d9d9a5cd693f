// Groups: create, open, attributes and children, in Zarr v3 (zarr.json) and v2 (.zgroup).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/kvstore/store.h"
#include "common/kvstore/store_handle.h"
#include "common/metadata/metadata.h"

namespace zarrd {

struct NodeEntry {
  std::string name;  // last path component
  enum class Kind { kArray, kGroup } kind;
  ZarrFormat format;
  // Why the child's zarr.json could not be read (too large, not JSON): its kind is unknown then.
  // One broken child does not make its parent unlistable.
  std::string error;
};

// Writes a group's metadata; ALREADY_EXISTS when any node is at `path`.
Status CreateGroup(const StoreHandle& store, const std::string& path,
                   const GroupMetadata& metadata);
// NOT_FOUND when there is no group at `path` (an array there is FAILED_PRECONDITION).
// Creates every missing ancestor group of `path` (from the store root down, as zarr-python
// does) in `format`; existing groups of either format are kept. FAILED_PRECONDITION when an
// ancestor is an array.
Status CreateParentGroups(const StoreHandle& store, const std::string& path, ZarrFormat format);
Result<GroupMetadata> OpenGroup(Store& store, const std::string& path);
Status SetGroupAttributes(const StoreHandle& store, const std::string& path,
                          const nlohmann::json& attributes);
// The arrays and groups directly below `path`, sorted by name.
Result<std::vector<NodeEntry>> ListChildren(Store& store, const std::string& path);

}  // namespace zarrd
