#include "proto/piece_wire.h"

#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <string>

namespace zarrd::wire {

namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using Response = v1::GetItemResponse;

// Wire types of the protobuf encoding.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

constexpr uint32_t Tag(int field, WireType type) {
  return static_cast<uint32_t>(field) << 3 | type;
}

}  // namespace

size_t EncodePieceHeader(uint64_t offset, uint64_t n, uint8_t* header) {
  uint8_t* at = header;
  if (offset != 0) {
    at = CodedOutputStream::WriteTagToArray(Tag(Response::kOffsetFieldNumber, kVarint), at);
    at = CodedOutputStream::WriteVarint64ToArray(offset, at);
  }
  if (n != 0) {
    at = CodedOutputStream::WriteTagToArray(Tag(Response::kDataFieldNumber, kLengthDelimited), at);
    at = CodedOutputStream::WriteVarint64ToArray(n, at);
  }
  return static_cast<size_t>(at - header);
}

Result<Piece> DecodePiece(google::protobuf::io::ZeroCopyInputStream* in, uint8_t* out,
                          size_t size) {
  CodedInputStream coded(in);
  coded.SetTotalBytesLimit(INT_MAX);
  Piece piece;
  bool data_seen = false;
  const auto malformed = [](const std::string& why) {
    return DataLoss("a GetItemResponse of the stream " + why);
  };
  while (const uint32_t tag = coded.ReadTag()) {
    const int field = static_cast<int>(tag >> 3);
    const uint32_t type = tag & 7;
    uint64_t value = 0;
    uint32_t length = 0;
    if (type == kVarint) {
      if (!coded.ReadVarint64(&value)) return malformed("is truncated");
      if (field == Response::kOffsetFieldNumber) {
        if (data_seen) return malformed("has its offset after its data");
        piece.offset = value;
      }
    } else if (type == kLengthDelimited) {
      if (!coded.ReadVarint32(&length)) return malformed("is truncated");
      if (field == Response::kDataFieldNumber) {
        if (piece.offset > size || length > size - piece.offset) {
          return DataLoss("the server sent a piece [" + std::to_string(piece.offset) + ", +" +
                          std::to_string(length) + ") outside the result of " +
                          std::to_string(size) + " bytes");
        }
        if (!coded.ReadRaw(out + piece.offset, static_cast<int>(length)))
          return malformed("is truncated");
        piece.data_bytes += length;
        data_seen = true;
      } else if (field == Response::kArrayFieldNumber) {
        std::string bytes;
        if (!coded.ReadString(&bytes, static_cast<int>(length)) ||
            !piece.array.ParseFromString(bytes)) {
          return malformed("has a descriptor that does not parse");
        }
        piece.has_array = true;
      } else if (!coded.Skip(static_cast<int>(length))) {
        return malformed("is truncated");
      }
    } else if (type == kFixed64 || type == kFixed32) {
      if (!coded.Skip(type == kFixed64 ? 8 : 4)) return malformed("is truncated");
    } else {
      return malformed("has wire type " + std::to_string(type) + " in field " +
                       std::to_string(field));
    }
  }
  if (!coded.ConsumedEntireMessage()) return malformed("does not parse");
  return piece;
}

}  // namespace zarrd::wire
