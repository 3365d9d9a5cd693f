// String results and inputs on the wire (see ArrayDescriptor in proto/zarrd/v1/zarrd.proto).
// Variable-length strings (numpy_dtype "|O"): per element, in C order, a uint32 LE byte length
// and the bytes (UTF-8 for data_type "string"), numcodecs' vlen layout without its item count.
// Fixed-length strings: numpy's own "|S<n>" and "<U<n>" (UTF-32LE) elements.
#pragma once

#include <cstdint>
#include <string>

#include "common/dtype/string_arena.h"
#include "common/metadata/metadata.h"
#include "common/util/bytes.h"

namespace zarrd::server {

// The wire size of `n` elements where it is fixed; 0 for variable-length strings.
uint64_t FixedStringWireBytes(const ArrayMetadata& m, uint64_t n);
// The least wire size of `n` elements.
uint64_t MinStringWireBytes(const ArrayMetadata& m, uint64_t n);

// The wire size of `n` string handles.
uint64_t StringWireBytes(const ArrayMetadata& m, const uint8_t* handles, uint64_t n);
// The wire form of `n` string handles.
std::string StringsToWire(const ArrayMetadata& m, const uint8_t* handles, uint64_t n);

// Parses the wire form of `n` elements into handles (8 bytes each) of strings kept in `arena`.
// INVALID_ARGUMENT for input that is not `n` elements, or not UTF-8 where text is expected.
Result<Bytes> StringsFromWire(const ArrayMetadata& m, ByteView in, uint64_t n, StringArena& arena);

}  // namespace zarrd::server
