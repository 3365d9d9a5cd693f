#pragma once

namespace zarrd {
inline constexpr const char* kZarrdVersion = "0.1.0";
}  // namespace zarrd
