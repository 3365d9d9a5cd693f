// .zarray / .zgroup / .zattrs (Zarr v2 spec).
#include "common/metadata/metadata.h"

namespace zarrd {

using nlohmann::json;

Result<ArrayMetadata> ParseV2ArrayMetadata(const json& j, const json& zattrs) {
  if (!j.is_object()) return InvalidArgument(".zarray: expected a JSON object");
  if (!j.contains("zarr_format") || j["zarr_format"] != 2) {
    return InvalidArgument("zarr_format: expected 2");
  }
  for (const char* field : {"shape", "chunks", "dtype", "compressor", "fill_value", "order"}) {
    if (!j.contains(field)) return InvalidArgument(std::string(field) + ": required field missing");
  }
  // Unknown keys are ignored, as zarr-python 2 does.
  ArrayMetadata m;
  m.format = ZarrFormat::kV2;
  ZARRD_ASSIGN_OR_RETURN(m.shape, internal::ParseExtents(j["shape"], "shape", false));
  ZARRD_ASSIGN_OR_RETURN(m.chunk_shape, internal::ParseExtents(j["chunks"], "chunks", true));
  if (!j["dtype"].is_string()) {
    return InvalidArgument("dtype: unsupported structured data type " + j["dtype"].dump());
  }
  ZARRD_ASSIGN_OR_RETURN(V2DataType dt, ParseV2DataType(j["dtype"].get<std::string>()));
  m.dtype = dt.dtype;
  m.v2_endian = dt.endian;
  m.time_unit = dt.time_unit;
  ZARRD_ASSIGN_OR_RETURN(m.fill_value, ParseFillValue(j["fill_value"], m.dtype, m.format));
  m.v2_fill_value_null = j["fill_value"].is_null();
  if (j["order"] != "C" && j["order"] != "F") {
    return InvalidArgument("order: expected \"C\" or \"F\", got " + j["order"].dump());
  }
  m.v2_order = j["order"].get<std::string>()[0];
  m.key_encoding = {ChunkKeyEncoding::Kind::kV2, '.'};
  if (j.contains("dimension_separator")) {
    const json& sep = j["dimension_separator"];
    if (sep != "/" && sep != ".")
      return InvalidArgument("dimension_separator: must be \"/\" or \".\"");
    m.key_encoding.separator = sep.get<std::string>()[0];
  }
  if (j.contains("filters") && !j["filters"].is_null() &&
      !(j["filters"].is_array() && j["filters"].empty())) {
    std::string ids;
    for (const json& f : j["filters"]) {
      const bool named = f.is_object() && f.contains("id") && f["id"].is_string();
      ids += (ids.empty() ? "" : ", ") + (named ? f["id"].get<std::string>() : f.dump());
    }
    return InvalidArgument("filters: unsupported filters [" + ids +
                           "] (zarrd reads arrays without filters)");
  }
  m.v2_compressor = j["compressor"];
  if (!zattrs.is_null()) {
    if (!zattrs.is_object()) return InvalidArgument(".zattrs: expected a JSON object");
    m.attributes = zattrs;
  }
  ZARRD_RETURN_IF_ERROR(m.Finalize());
  return m;
}

json ToV2Json(const ArrayMetadata& m) {
  json fill = m.v2_fill_value_null ? json(nullptr)
                                   : FillValueToJson(m.fill_value, m.dtype, ZarrFormat::kV2);
  return {{"zarr_format", 2},
          {"shape", m.shape},
          {"chunks", m.chunk_shape},
          {"dtype", V2Typestr(m.dtype, m.v2_endian, m.time_unit)},
          {"fill_value", fill},
          {"order", std::string(1, m.v2_order)},
          {"compressor", m.v2_compressor},
          {"filters", nullptr},
          {"dimension_separator", std::string(1, m.key_encoding.separator)}};
}

}  // namespace zarrd
