// Fill values: the JSON forms of Zarr v2 and v3, held as one element of little-endian bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "common/dtype/dtype.h"
#include "common/util/status.h"

namespace zarrd {

// One element in the engine's in-memory layout (little-endian). For string types the element is a
// handle (common/dtype/string_arena.h), and `holds` keeps its string alive while any copy of the
// value lives.
struct FillValue : std::vector<uint8_t> {
  using std::vector<uint8_t>::vector;
  std::shared_ptr<const void> holds;
};

enum class ZarrFormat : int { kV2 = 2, kV3 = 3 };

// Parses `json` as the fill value of `dtype`. v2's null means zero.
Result<FillValue> ParseFillValue(const nlohmann::json& json, DataType dtype, ZarrFormat format);
nlohmann::json FillValueToJson(const FillValue& value, DataType dtype, ZarrFormat format);
FillValue ZeroFillValue(DataType dtype);
// The fill value of a string type: an interned string's handle, holding it.
FillValue StringFillValue(std::string_view value);
// Whether the `count` elements at `data` all equal `fill`: their bytes for numbers, their texts
// for strings (equal texts may have different handles).
bool AllFill(const uint8_t* data, size_t count, const FillValue& fill, DataType dtype);

}  // namespace zarrd
