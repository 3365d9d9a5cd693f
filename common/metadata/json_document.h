// JSON documents: metadata documents (zarr.json, .zarray, .zgroup, .zattrs) read from and written
// to a store, and the one parser every JSON input goes through (requests, stored documents, the
// config file), which bounds nesting depth and size before nlohmann/json recurses into it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/kvstore/store.h"
#include "common/util/status.h"

namespace zarrd {

// Deeper documents are refused: nlohmann/json parses, copies, dumps and destroys recursively.
// Stored documents may nest a little deeper than requests: a zarr.json holds the attributes a
// request set one level down.
inline constexpr size_t kMaxJsonDepth = 64;
inline constexpr size_t kMaxStoredJsonDepth = kMaxJsonDepth + 8;
// Larger documents are refused before they are read or parsed.
inline constexpr uint64_t kMaxJsonDocumentBytes = uint64_t{16} << 20;

// Parses `text`, naming `what` (e.g. the node and key) in the error: `code` (INVALID_ARGUMENT for
// requests, DATA_LOSS for stored documents) when it is not JSON, nests deeper than `max_depth`
// or exceeds kMaxJsonDocumentBytes.
Result<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& what,
                                         StatusCode code = StatusCode::kInvalidArgument,
                                         size_t max_depth = kMaxJsonDepth);

// The parsed document at `key`, or nullopt when the key is absent; a stored document that is too
// large, too deep or not JSON is DATA_LOSS naming the key.
Result<std::optional<nlohmann::json>> ReadJsonDocument(Store& store, const std::string& key);
Status WriteJsonDocument(Store& store, const std::string& key, const nlohmann::json& document);
// Keys of the documents that make a node: zarr.json, .zarray, .zgroup and .zattrs (the last
// component of the key).
bool IsNodeDocumentKey(std::string_view key);
// Those and the v2 consolidated metadata (.zmetadata): every metadata document zarrd stores.
bool IsMetadataDocumentKey(std::string_view key);
// True when an array or group (either format) has its metadata document at `path`.
Result<bool> NodeExists(Store& store, const std::string& path);
// A node path: "" (the store root) or a valid key; `what` names it in the error.
Status CheckNodePath(const std::string& path, const char* what);

}  // namespace zarrd
