// Streamed result pieces (GetItemResponse{array, offset, data}) on the wire, with the field
// numbers of the generated GetItemResponse. The server writes a piece as a small header followed
// by data bytes it already holds (no copy into a message), and clients parse pieces straight into
// their result (one copy). The bytes are those protobuf's SerializeToString writes
// (tests/data/wire/get_item_pieces.json; client/python/zarrd/wire.py is the Python twin).
#pragma once

#include <google/protobuf/io/zero_copy_stream.h>

#include <cstddef>
#include <cstdint>

#include "common/util/status.h"
#include "zarrd/v1/zarrd.pb.h"

namespace zarrd::wire {

// The longest header: two tags and two 64-bit varints.
inline constexpr size_t kMaxPieceHeader = 2 * (1 + 10);

// Writes the bytes of GetItemResponse{offset, data} that precede the data's `n` bytes into
// `header` (kMaxPieceHeader bytes) and returns their count. As protobuf, a zero offset and empty
// data are not written.
size_t EncodePieceHeader(uint64_t offset, uint64_t n, uint8_t* header);

struct Piece {
  uint64_t offset = 0;
  uint64_t data_bytes = 0;  // copied to out + offset
  bool has_array = false;
  v1::ArrayDescriptor array;
};

// Parses one serialized GetItemResponse from `in`, copying its data to out[offset, offset + n)
// of a result of `size` bytes. DATA_LOSS when it does not parse, when its data comes before its
// offset, or when the piece falls outside the result.
Result<Piece> DecodePiece(google::protobuf::io::ZeroCopyInputStream* in, uint8_t* out, size_t size);

}  // namespace zarrd::wire
