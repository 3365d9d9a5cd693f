// Metadata documents (zarr.json, .zarray, .zgroup, .zattrs) read from and written to a store.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "common/store.h"

namespace zarrd {

// The parsed document at `key`, or nullopt when the key is absent.
Result<std::optional<nlohmann::json>> ReadJsonDocument(Store& store, const std::string& key);
Status WriteJsonDocument(Store& store, const std::string& key, const nlohmann::json& document);
// True when an array or group (either format) has its metadata document at `path`.
Result<bool> NodeExists(Store& store, const std::string& path);
// A node path: "" (the store root) or a valid key; `what` names it in the error.
Status CheckNodePath(const std::string& path, const char* what);

}  // namespace zarrd
