// A group and the nodes below it with their metadata, read in one go: from the group's
// consolidated metadata when it has some (common/consolidated.h; one read, as zarr-python's
// open_consolidated), else from each node's stored documents.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "common/kvstore/store_handle.h"
#include "common/metadata/metadata.h"
#include "common/util/status.h"

namespace zarrd {

struct TreeNode {
  std::string path;  // from the store root
  std::variant<ArrayMetadata, GroupMetadata> metadata;
};

struct NodeTree {
  std::vector<TreeNode> nodes;  // the group first, then the nodes below it by path
  bool consolidated = false;    // the nodes below the group came from consolidated metadata
};

// `max_depth`: levels below the group (1: its children), 0 for all. NOT_FOUND when there is no
// group at `path`. A consolidated entry that does not parse is DATA_LOSS naming it: a copy
// that misleads is refused rather than half used.
Result<NodeTree> ReadNodeTree(const StoreHandle& store, const std::string& path, int max_depth,
                              bool use_consolidated);

}  // namespace zarrd
