// zarr.json for arrays and groups (Zarr v3 core spec).
#include <set>

#include "common/metadata/metadata.h"

namespace zarrd {

using nlohmann::json;

namespace {

// Unknown top-level fields are refused unless they say `"must_understand": false`.
Status CheckExtensions(const json& j, const std::set<std::string>& known) {
  for (const auto& [key, value] : j.items()) {
    if (known.count(key)) continue;
    if (value.is_object() && value.contains("must_understand") &&
        value["must_understand"] == false) {
      continue;
    }
    return InvalidArgument(key +
                           ": unknown field (extensions must say \"must_understand\": false)");
  }
  return OkStatus();
}

Status CheckNode(const json& j, const char* node_type) {
  if (!j.is_object()) return InvalidArgument("zarr.json: expected a JSON object");
  if (!j.contains("zarr_format") || j["zarr_format"] != 3) {
    return InvalidArgument("zarr_format: expected 3, got " +
                           (j.contains("zarr_format") ? j["zarr_format"].dump() : "nothing"));
  }
  if (!j.contains("node_type") || j["node_type"] != node_type) {
    return InvalidArgument(std::string("node_type: expected \"") + node_type + "\", got " +
                           (j.contains("node_type") ? j["node_type"].dump() : "nothing"));
  }
  if (j.contains("attributes") && !j["attributes"].is_object()) {
    return InvalidArgument("attributes: expected an object");
  }
  return OkStatus();
}

// {"name": ..., "configuration": {...}} with a required name.
Status ParseNamed(const json& j, const std::string& field, std::string* name, json* config) {
  if (j.is_string()) {
    *name = j.get<std::string>();
    *config = json::object();
    return OkStatus();
  }
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    return InvalidArgument(field + ": expected an object with a string \"name\"");
  }
  *name = j["name"].get<std::string>();
  *config = j.value("configuration", json::object());
  if (!config->is_object()) return InvalidArgument(field + ".configuration: expected an object");
  return OkStatus();
}

json V3DataTypeJson(const ArrayMetadata& m) {
  if (!IsTimeType(m.dtype)) return std::string(V3Name(m.dtype));
  return {{"name", std::string(V3Name(m.dtype))},
          {"configuration", {{"unit", m.time_unit.unit}, {"scale_factor", m.time_unit.scale}}}};
}

}  // namespace

Result<ArrayMetadata> ParseV3ArrayMetadata(const json& j) {
  ZARRD_RETURN_IF_ERROR(CheckNode(j, "array"));
  ZARRD_RETURN_IF_ERROR(CheckExtensions(
      j, {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
          "fill_value", "codecs", "attributes", "dimension_names", "storage_transformers"}));
  for (const char* field :
       {"shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"}) {
    if (!j.contains(field)) return InvalidArgument(std::string(field) + ": required field missing");
  }
  ArrayMetadata m;
  m.format = ZarrFormat::kV3;
  ZARRD_ASSIGN_OR_RETURN(m.shape, internal::ParseExtents(j["shape"], "shape", false));
  std::string name;
  json config;
  ZARRD_RETURN_IF_ERROR(ParseNamed(j["data_type"], "data_type", &name, &config));
  ZARRD_ASSIGN_OR_RETURN(m.dtype, ParseV3DataType(name));
  if (IsTimeType(m.dtype)) {
    // zarr-python 3: {"name": "numpy.datetime64", "configuration": {"unit", "scale_factor"}}.
    if (!config.contains("unit") || !config["unit"].is_string() ||
        !config.value("scale_factor", json(1)).is_number_integer()) {
      return InvalidArgument("data_type: " + name +
                             " needs a configuration with a string unit and an integer "
                             "scale_factor");
    }
    auto unit = MakeTimeUnit(config["unit"].get<std::string>(),
                             config.value("scale_factor", json(1)).get<int64_t>());
    if (!unit.ok()) return unit.status().WithContext("data_type");
    m.time_unit = *unit;
  } else if (!j["data_type"].is_string()) {
    return InvalidArgument("data_type: unsupported data type " + j["data_type"].dump());
  }

  ZARRD_RETURN_IF_ERROR(ParseNamed(j["chunk_grid"], "chunk_grid", &name, &config));
  if (name != "regular") {
    return InvalidArgument("chunk_grid: unsupported grid \"" + name + "\" (zarrd has regular)");
  }
  if (!config.contains("chunk_shape")) {
    return InvalidArgument("chunk_grid.configuration.chunk_shape: required field missing");
  }
  ZARRD_ASSIGN_OR_RETURN(
      m.chunk_shape,
      internal::ParseExtents(config["chunk_shape"], "chunk_grid.configuration.chunk_shape", true));
  ZARRD_RETURN_IF_ERROR(ParseNamed(j["chunk_key_encoding"], "chunk_key_encoding", &name, &config));
  if (name == "default") {
    m.key_encoding = {ChunkKeyEncoding::Kind::kDefault, '/'};
  } else if (name == "v2") {
    m.key_encoding = {ChunkKeyEncoding::Kind::kV2, '.'};
  } else {
    return InvalidArgument("chunk_key_encoding: unsupported encoding \"" + name + "\"");
  }
  if (config.contains("separator")) {
    const json& sep = config["separator"];
    if (sep != "/" && sep != ".") {
      return InvalidArgument("chunk_key_encoding.configuration.separator: must be \"/\" or \".\"");
    }
    m.key_encoding.separator = sep.get<std::string>()[0];
  }
  ZARRD_ASSIGN_OR_RETURN(m.fill_value, ParseFillValue(j["fill_value"], m.dtype, m.format));
  m.codecs = j["codecs"];
  if (j.contains("attributes")) m.attributes = j["attributes"];
  if (j.contains("dimension_names") && !j["dimension_names"].is_null()) {
    const json& names = j["dimension_names"];
    if (!names.is_array()) return InvalidArgument("dimension_names: expected a list");
    std::vector<std::optional<std::string>> out;
    for (const json& n : names) {
      if (n.is_null()) {
        out.emplace_back();
      } else if (n.is_string()) {
        out.emplace_back(n.get<std::string>());
      } else {
        return InvalidArgument("dimension_names: entries must be strings or null");
      }
    }
    m.dimension_names = std::move(out);
  }
  if (j.contains("storage_transformers") &&
      !(j["storage_transformers"].is_array() && j["storage_transformers"].empty())) {
    return InvalidArgument("storage_transformers: none are supported, got " +
                           j["storage_transformers"].dump());
  }
  ZARRD_RETURN_IF_ERROR(m.Finalize());
  return m;
}

json ToV3Json(const ArrayMetadata& m) {
  json j = {
      {"zarr_format", 3},
      {"node_type", "array"},
      {"shape", m.shape},
      {"data_type", V3DataTypeJson(m)},
      {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", m.chunk_shape}}}}},
      {"chunk_key_encoding",
       {{"name", m.key_encoding.kind == ChunkKeyEncoding::Kind::kDefault ? "default" : "v2"},
        {"configuration", {{"separator", std::string(1, m.key_encoding.separator)}}}}},
      {"fill_value", FillValueToJson(m.fill_value, m.dtype, ZarrFormat::kV3)},
      {"codecs", m.codec_chain ? m.codec_chain->ToJson() : m.codecs},
      {"attributes", m.attributes}};
  if (m.dimension_names) {
    json names = json::array();
    for (const auto& n : *m.dimension_names) names.push_back(n ? json(*n) : json(nullptr));
    j["dimension_names"] = names;
  }
  return j;
}

Result<GroupMetadata> ParseV3GroupMetadata(const json& j) {
  ZARRD_RETURN_IF_ERROR(CheckNode(j, "group"));
  ZARRD_RETURN_IF_ERROR(
      CheckExtensions(j, {"zarr_format", "node_type", "attributes", "consolidated_metadata"}));
  GroupMetadata g;
  g.format = ZarrFormat::kV3;
  if (j.contains("attributes")) g.attributes = j["attributes"];
  if (j.contains("consolidated_metadata")) g.consolidated_metadata = j["consolidated_metadata"];
  return g;
}

json ToV3Json(const GroupMetadata& g) {
  json j = {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", g.attributes}};
  if (!g.consolidated_metadata.is_null()) j["consolidated_metadata"] = g.consolidated_metadata;
  return j;
}

}  // namespace zarrd
