// Fill values: the JSON forms of Zarr v2 and v3, held as one element of little-endian bytes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "common/dtype/dtype.h"
#include "common/util/status.h"

namespace zarrd {

// One element in the engine's in-memory layout (little-endian).
using FillValue = std::vector<uint8_t>;

enum class ZarrFormat : int { kV2 = 2, kV3 = 3 };

// Parses `json` as the fill value of `dtype`. v2's null means zero.
Result<FillValue> ParseFillValue(const nlohmann::json& json, DataType dtype, ZarrFormat format);
nlohmann::json FillValueToJson(const FillValue& value, DataType dtype, ZarrFormat format);
FillValue ZeroFillValue(DataType dtype);
// The fill value of a string type: an interned string's handle (common/dtype/string_arena.h).
FillValue StringFillValue(std::string_view value);

}  // namespace zarrd
