#include "common/metadata/json_document.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace zarrd {
namespace {

std::string Nested(size_t depth, const std::string& open, const std::string& inner,
                   const std::string& close) {
  std::string s;
  for (size_t i = 0; i < depth; ++i) s += open;
  s += inner;
  for (size_t i = 0; i < depth; ++i) s += close;
  return s;
}

TEST(JsonDocument, NestingUpToTheLimitParsesDeeperIsRefused) {
  auto at = ParseJsonDocument(Nested(kMaxJsonDepth, "[", "", "]"), "attributes_json");
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  auto past = ParseJsonDocument(Nested(kMaxJsonDepth + 1, "[", "", "]"), "attributes_json");
  EXPECT_EQ(past.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(past.status().message().find("attributes_json: JSON nests deeper than 64"),
            std::string::npos)
      << past.status().ToString();
  auto objects = ParseJsonDocument(Nested(kMaxJsonDepth + 1, "{\"a\":", "1", "}"), "doc");
  EXPECT_EQ(objects.status().code(), StatusCode::kInvalidArgument);
  // Brackets inside strings (escaped quotes too) are text, not nesting.
  const std::string text = "{\"a\": \"" + Nested(200, "[{", "\\\"", "}]") + "\"}";
  auto in_string = ParseJsonDocument(text, "doc");
  ASSERT_TRUE(in_string.ok()) << in_string.status().ToString();
  EXPECT_EQ((*in_string)["a"].get<std::string>().size(), 801u);
}

// 100,000 levels crashed zarrd (SIGSEGV) and 30,000 took past a 10 s deadline.
TEST(JsonDocument, VeryDeepDocumentsAreRefusedFast) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) {
    auto deep = ParseJsonDocument(Nested(100000, "[", "", "]"), "doc", StatusCode::kDataLoss);
    EXPECT_EQ(deep.status().code(), StatusCode::kDataLoss);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(JsonDocument, OversizedAndMalformedDocuments) {
  EXPECT_EQ(ParseJsonDocument("{\"a\": ", "doc").status().code(), StatusCode::kInvalidArgument);
  const std::string huge = "\"" + std::string(kMaxJsonDocumentBytes, 'x') + "\"";
  auto big = ParseJsonDocument(huge, "doc", StatusCode::kDataLoss);
  EXPECT_EQ(big.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(big.status().message().find("exceeds the limit"), std::string::npos);
  // JSON (RFC 8259) has no raw NUL bytes; nlohmann/json alone would stop reading at one and accept
  // the text before it (Python's json.loads refuses both).
  using namespace std::string_literals;
  for (const std::string& text : {"{\"a\": 1}\0{\"b\": "s, "\"x\0y\""s, "\0"s}) {
    auto nul = ParseJsonDocument(text, "doc");
    EXPECT_EQ(nul.status().code(), StatusCode::kInvalidArgument) << text.size();
  }
}

TEST(JsonDocument, StoredDocumentsTooDeepOrTooLargeAreDataLossNamingTheKey) {
  auto store = MakeMemoryStore();
  const std::string deep =
      "{\"zarr_format\": 3, \"attributes\": " + Nested(1000, "{\"a\":", "1", "}") + "}";
  ASSERT_TRUE(
      store
          ->Set("g/zarr.json", ByteView(reinterpret_cast<const uint8_t*>(deep.data()), deep.size()))
          .ok());
  auto read = ReadJsonDocument(*store, "g/zarr.json");
  EXPECT_EQ(read.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(read.status().message().find("g/zarr.json"), std::string::npos)
      << read.status().ToString();
  const std::string big(kMaxJsonDocumentBytes + 1, ' ');
  ASSERT_TRUE(
      store->Set("h/zarr.json", ByteView(reinterpret_cast<const uint8_t*>(big.data()), big.size()))
          .ok());
  auto oversized = ReadJsonDocument(*store, "h/zarr.json");
  EXPECT_EQ(oversized.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(oversized.status().message().find("h/zarr.json"), std::string::npos);
}

}  // namespace
}  // namespace zarrd
