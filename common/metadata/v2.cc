// .zarray / .zgroup / .zattrs (Zarr v2 spec).
#include "common/codec/numpy_scalar.h"
#include "common/metadata/metadata.h"

namespace zarrd {

using nlohmann::json;

namespace {

// The filter list's shape, and that each filter's data types have the array's byte order: zarrd
// decodes the filters on little-endian values and byte-swaps what the last one gives.
Status CheckV2Filters(const json& filters, DataType dtype, Endian endian) {
  if (!filters.is_array()) return InvalidArgument("filters: expected null or a list");
  for (const json& f : filters) {
    if (!f.is_object() || !f.contains("id") || !f["id"].is_string()) {
      return InvalidArgument("filters: expected objects with a string \"id\", got " + f.dump());
    }
    for (const char* field : {"dtype", "astype", "encode_dtype", "decode_dtype"}) {
      Endian order;
      auto type = ParseNumcodecsDtype(f, f["id"].get<std::string>(), field, &order);
      if (type.ok() && ItemSize(*type) > 1 && order != endian) {
        return InvalidArgument("filters: " + f.dump() + " has " + field + " " + f[field].dump() +
                               " of another byte order than the array's " +
                               V2Typestr(dtype, endian));
      }
    }
  }
  return OkStatus();
}

}  // namespace

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
  m.string_width = dt.string_width;
  if (m.dtype == DataType::kString && m.string_width == 0 && j.contains("filters") &&
      j["filters"].is_array()) {
    for (const json& f : j["filters"]) {
      if (f.is_object() && f.value("id", json()) == "vlen-bytes") m.dtype = DataType::kBytes;
    }
  }
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
  if (j.contains("filters") && !j["filters"].is_null()) {
    ZARRD_RETURN_IF_ERROR(CheckV2Filters(j["filters"], m.dtype, m.v2_endian));
    if (!j["filters"].empty()) m.v2_filters = j["filters"];
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
          {"dtype", V2Typestr(m.dtype, m.v2_endian, m.time_unit, m.string_width)},
          {"fill_value", fill},
          {"order", std::string(1, m.v2_order)},
          {"compressor", m.v2_compressor},
          {"filters", m.v2_filters},
          {"dimension_separator", std::string(1, m.key_encoding.separator)}};
}

}  // namespace zarrd
