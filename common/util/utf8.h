// UTF-8 checks and UTF-8 <-> UTF-32 (numpy's "<U<n>" elements) conversions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zarrd {

// Well-formed UTF-8 as Python's str.decode("utf-8") accepts it (no surrogates, no overlongs).
bool IsValidUtf8(std::string_view text);

// Appends up to `max_code_points` code points of `text` (well-formed UTF-8; anything else
// becomes U+FFFD) to `out` as 32-bit values, and returns how many it appended.
size_t Utf8ToUtf32(std::string_view text, size_t max_code_points, char32_t* out);

// Appends `code_point` as UTF-8; false (appending nothing) past U+10FFFF. Surrogates are
// written as numpy holds them, in the 3-byte form.
bool AppendUtf8(char32_t code_point, std::string* out);

}  // namespace zarrd
