// Byte buffers and views: what stores hold, codecs encode and decode, and the wire carries.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace zarrd {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;
using MutableByteView = std::span<uint8_t>;

}  // namespace zarrd
