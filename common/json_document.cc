#include "common/json_document.h"

#include "common/metadata.h"

namespace zarrd {

Result<std::optional<nlohmann::json>> ReadJsonDocument(Store& store, const std::string& key) {
  Bytes bytes;
  ZARRD_ASSIGN_OR_RETURN(bool found, store.Get(key, &bytes));
  if (!found) return std::optional<nlohmann::json>();
  ZARRD_ASSIGN_OR_RETURN(
      nlohmann::json j,
      ParseJsonDocument(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                        key));
  return std::optional<nlohmann::json>(std::move(j));
}

Status WriteJsonDocument(Store& store, const std::string& key, const nlohmann::json& document) {
  const std::string text = document.dump(2);
  return store.Set(key, ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Result<bool> NodeExists(Store& store, const std::string& path) {
  Bytes probe;
  for (const char* doc : {"zarr.json", ".zarray", ".zgroup"}) {
    ZARRD_ASSIGN_OR_RETURN(bool exists, store.Get(JoinKey(path, doc), &probe));
    if (exists) return true;
  }
  return false;
}

Status CheckNodePath(const std::string& path, const char* what) {
  return path.empty() ? OkStatus() : ValidateKey(path).WithContext(what);
}

}  // namespace zarrd
