// Standard base64 (RFC 4648, padded), as numpy's fixed-length bytes fill values are written in
// Zarr v2 metadata.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zarrd {

std::string Base64Encode(std::string_view bytes);
// nullopt for text that is not padded base64.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace zarrd
