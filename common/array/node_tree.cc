#include "common/array/node_tree.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>

#include "common/array/array.h"
#include "common/metadata/consolidated.h"
#include "common/metadata/group.h"
#include "common/metadata/json_document.h"

namespace zarrd {
namespace {

using nlohmann::json;

bool Within(std::string_view relative, int max_depth) {
  return max_depth <= 0 || std::count(relative.begin(), relative.end(), '/') < max_depth;
}

std::string Below(const std::string& path, const std::string& relative) {
  return path.empty() ? relative : path + "/" + relative;
}

Status Corrupt(const std::string& key, const std::string& entry, const Status& why) {
  return DataLoss(key + ": consolidated entry \"" + entry + "\": " + why.message());
}

// zarr-python 3's consolidated_metadata: entries keyed by path relative to the group.
Result<std::vector<TreeNode>> FromV3(const std::string& path, const json& metadata, int max_depth) {
  const std::string key = JoinKey(path, "zarr.json");
  std::vector<TreeNode> out;
  for (const auto& [relative, doc] : metadata.items()) {  // sorted: a std::map underneath
    if (!Within(relative, max_depth)) continue;
    const bool array = doc.is_object() && doc.value("node_type", "") == "array";
    if (array) {
      auto m = ParseV3ArrayMetadata(doc);
      if (!m.ok()) return Corrupt(key, relative, m.status());
      out.push_back({Below(path, relative), std::move(*m)});
    } else {
      auto g = ParseV3GroupMetadata(doc);
      if (!g.ok()) return Corrupt(key, relative, g.status());
      g->consolidated_metadata = nullptr;  // the nearest group's copy describes them
      out.push_back({Below(path, relative), std::move(*g)});
    }
  }
  return out;
}

// zarr 2's .zmetadata: ".zarray", ".zgroup" and ".zattrs" documents keyed "<node>/<document>".
Result<std::vector<TreeNode>> FromV2(const std::string& path, const json& metadata, int max_depth) {
  const std::string key = JoinKey(path, kV2ConsolidatedKey);
  struct Documents {
    const json* zarray = nullptr;
    const json* zgroup = nullptr;
    json zattrs;
  };
  std::map<std::string, Documents> nodes;
  for (const auto& [entry, doc] : metadata.items()) {
    const size_t slash = entry.rfind('/');
    if (slash == std::string::npos) continue;  // the group's own documents
    const std::string node = entry.substr(0, slash), name = entry.substr(slash + 1);
    if (name == ".zarray") nodes[node].zarray = &doc;
    if (name == ".zgroup") nodes[node].zgroup = &doc;
    if (name == ".zattrs") nodes[node].zattrs = doc;
  }
  std::vector<TreeNode> out;
  for (auto& [node, docs] : nodes) {
    if (!Within(node, max_depth)) continue;
    if (docs.zarray) {
      auto m = ParseV2ArrayMetadata(*docs.zarray, docs.zattrs);
      if (!m.ok()) return Corrupt(key, node + "/.zarray", m.status());
      out.push_back({Below(path, node), std::move(*m)});
    } else if (docs.zgroup) {
      GroupMetadata g;
      g.format = ZarrFormat::kV2;
      if (docs.zattrs.is_object()) g.attributes = docs.zattrs;
      out.push_back({Below(path, node), std::move(g)});
    }
  }
  return out;
}

// Each node's own documents, group by group.
Result<std::vector<TreeNode>> FromDocuments(const StoreHandle& store, const std::string& path,
                                            int max_depth) {
  std::vector<TreeNode> out;
  std::deque<std::pair<std::string, int>> groups{{path, 0}};
  while (!groups.empty()) {
    auto [group, depth] = groups.front();
    groups.pop_front();
    ZARRD_ASSIGN_OR_RETURN(auto children, ListChildren(*store, group));
    for (const auto& child : children) {
      if (!child.error.empty()) continue;  // unreadable: ListNodes skips it too
      const std::string child_path = group.empty() ? child.name : group + "/" + child.name;
      if (child.kind == NodeEntry::Kind::kArray) {
        ZARRD_ASSIGN_OR_RETURN(auto array, Array::Open(store, child_path));
        out.push_back({child_path, *array->metadata()});
        continue;
      }
      ZARRD_ASSIGN_OR_RETURN(GroupMetadata g, OpenGroup(*store, child_path));
      out.push_back({child_path, std::move(g)});
      if (max_depth <= 0 || depth + 1 < max_depth) groups.push_back({child_path, depth + 1});
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.path < b.path; });
  return out;
}

}  // namespace

Result<NodeTree> ReadNodeTree(const StoreHandle& store, const std::string& path, int max_depth,
                              bool use_consolidated) {
  ZARRD_RETURN_IF_ERROR(CheckNodePath(path, "group path"));
  ZARRD_ASSIGN_OR_RETURN(GroupMetadata group, OpenGroup(*store, path));
  std::optional<std::vector<TreeNode>> below;
  if (use_consolidated && group.format == ZarrFormat::kV3 &&
      group.consolidated_metadata.is_object() &&
      group.consolidated_metadata.value("metadata", json()).is_object()) {
    ZARRD_ASSIGN_OR_RETURN(below, FromV3(path, group.consolidated_metadata["metadata"], max_depth));
  } else if (use_consolidated && group.format == ZarrFormat::kV2) {
    ZARRD_ASSIGN_OR_RETURN(auto doc, ReadJsonDocument(*store, JoinKey(path, kV2ConsolidatedKey)));
    if (doc && doc->is_object() && doc->value("metadata", json()).is_object()) {
      ZARRD_ASSIGN_OR_RETURN(below, FromV2(path, (*doc)["metadata"], max_depth));
    }
  }
  NodeTree tree;
  tree.consolidated = below.has_value();
  if (!below) {
    ZARRD_ASSIGN_OR_RETURN(below, FromDocuments(store, path, max_depth));
  }
  tree.nodes.push_back({path, std::move(group)});
  for (auto& node : *below) tree.nodes.push_back(std::move(node));
  return tree;
}

}  // namespace zarrd
