// Consolidated metadata: a group's copy of the metadata documents of every node below it, so a
// reader (xarray writes it by default) opens a whole hierarchy with one read.
// - Zarr v3: the group's zarr.json field "consolidated_metadata", as zarr-python 3 writes it:
//     {"kind": "inline", "must_understand": false,
//      "metadata": {"<path relative to the group>": <that node's zarr.json>, ...}}
//   every node reachable through v3 groups, each child group with an empty
//   "consolidated_metadata" of its own.
// - Zarr v2: the group's .zmetadata, as zarr 2's consolidate_metadata writes it:
//     {"zarr_consolidated_format": 1,
//      "metadata": {".zgroup": {...}, ".zattrs": {...}, "a/.zarray": {...}, ...}}
// A group that has consolidated metadata keeps it current: after a node at or below it is
// created, deleted, resized or has its attributes set, RefreshConsolidatedMetadata rebuilds it
// from the stored documents.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/kvstore/store.h"
#include "common/kvstore/store_handle.h"
#include "common/metadata/group.h"
#include "common/metadata/metadata.h"
#include "common/util/status.h"

namespace zarrd {

inline constexpr char kV2ConsolidatedKey[] = ".zmetadata";

// The "consolidated_metadata" value of the v3 group at `path`, from the zarr.json documents
// stored below it.
Result<nlohmann::json> BuildV3Consolidated(Store& store, const std::string& path);
// The .zmetadata document of the v2 group at `path`: every .zarray, .zgroup and .zattrs at or
// below it, keyed relative to it.
Result<nlohmann::json> BuildV2Consolidated(Store& store, const std::string& path);

struct ConsolidateResult {
  ZarrFormat format = ZarrFormat::kV3;
  std::string key;     // where it was written: the group's zarr.json or .zmetadata
  size_t entries = 0;  // v3: nodes below the group; v2: documents
};

// Writes the consolidated metadata of the group at `path` in the group's format, whether it had
// any before or not. NOT_FOUND when there is no group (an array is FAILED_PRECONDITION); a v3
// zarr.json that would grow past what zarrd reads back (kMaxJsonDocumentBytes,
// kMaxStoredJsonDepth) is RESOURCE_EXHAUSTED and not written.
Result<ConsolidateResult> ConsolidateMetadata(const StoreHandle& store, const std::string& path);

// The children of `path` as the consolidated metadata of `path`, or of the nearest group above
// it that has some, records them; nullopt when none has. For stores that cannot list (plain
// HTTP), where this copy is the only index of a hierarchy.
Result<std::optional<std::vector<NodeEntry>>> ListChildrenFromConsolidated(Store& store,
                                                                           const std::string& path);

// Call after the node at `path` was created, deleted, resized or had its attributes set:
// rebuilds the consolidated metadata of every group at or above `path` that has it. Takes
// NodeLocks::Share of each group, so a group deleted meanwhile is not brought back.
Status RefreshConsolidatedMetadata(const StoreHandle& store, const std::string& path);

}  // namespace zarrd
