#include "proto/piece_wire.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace zarrd::wire {
namespace {

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// GetItemResponse messages serialized by protobuf (tests/data/wire/make_pieces.py).
nlohmann::json Vector() {
  std::ifstream f(std::string(ZARRD_WIRE_VECTORS_DIR) + "/get_item_pieces.json");
  return nlohmann::json::parse(f)["messages"];
}

Result<Piece> Decode(const std::string& bytes, std::vector<uint8_t>* out, int block = -1) {
  google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()), block);
  return DecodePiece(&in, out->data(), out->size());
}

TEST(PieceWire, DecodesProtobufsBytesIntoTheResult) {
  const auto messages = Vector();
  ASSERT_EQ(messages.size(), 4u);
  for (const auto& m : messages) {
    const std::string bytes = FromHex(m["hex"]), data = FromHex(m["data_hex"]);
    const uint64_t offset = m["offset"];
    // A result just large enough, then the message split in blocks of 7 bytes as gRPC's slices.
    for (int block : {-1, 7}) {
      std::vector<uint8_t> out(data.empty() ? 0 : offset + data.size(), 0xee);
      auto piece = Decode(bytes, &out, block);
      ASSERT_TRUE(piece.ok()) << piece.status().ToString();
      EXPECT_EQ(piece->data_bytes, data.size());
      EXPECT_EQ(piece->has_array, !m["array_hex"].is_null());
      if (!data.empty()) {
        EXPECT_EQ(piece->offset, offset);
        EXPECT_EQ(std::string(out.begin() + offset, out.end()), data);
        EXPECT_TRUE(
            std::all_of(out.begin(), out.begin() + offset, [](uint8_t b) { return b == 0xee; }));
      }
      if (piece->has_array) {
        EXPECT_EQ(piece->array.SerializeAsString(), FromHex(m["array_hex"]));
        EXPECT_EQ(piece->array.data_type(), "uint16");
      }
    }
  }
}

TEST(PieceWire, EncodesWhatProtobufWrites) {
  for (const auto& m : Vector()) {
    const std::string data = FromHex(m["data_hex"]);
    std::string encoded;
    if (!m["array_hex"].is_null()) {  // the first message: the descriptor, serialized whole
      v1::GetItemResponse first;
      ASSERT_TRUE(first.mutable_array()->ParseFromString(FromHex(m["array_hex"])));
      encoded = first.SerializeAsString();
    }
    uint8_t header[kMaxPieceHeader];
    encoded.append(reinterpret_cast<char*>(header),
                   EncodePieceHeader(m["offset"].get<uint64_t>(), data.size(), header));
    encoded += data;
    EXPECT_EQ(encoded, FromHex(m["hex"]));
  }
}

TEST(PieceWire, RefusesPiecesOutsideTheResultAndBrokenMessages) {
  const auto m = Vector()[1];  // offset 300, 517 bytes
  const std::string bytes = FromHex(m["hex"]);
  std::vector<uint8_t> small(300 + 516);
  auto outside = Decode(bytes, &small);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(outside.status().message().find("[300, +517) outside the result of 816"),
            std::string::npos);
  std::vector<uint8_t> out(300 + 517);
  auto truncated = Decode(bytes.substr(0, bytes.size() - 1), &out);
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss);
  // Data before the offset: the piece's place is not known when its bytes arrive.
  v1::GetItemResponse offset_only;
  offset_only.set_offset(300);
  auto reordered = Decode(bytes.substr(3) + offset_only.SerializeAsString(), &out);
  EXPECT_EQ(reordered.status().code(), StatusCode::kDataLoss);
  auto zero_tag = Decode(std::string("\x10\x05\x00", 3), &out);
  EXPECT_EQ(zero_tag.status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace zarrd::wire
