#include "common/util/base64.h"

#include <gtest/gtest.h>

namespace zarrd {
namespace {

// Python's base64.standard_b64encode.
TEST(Base64, MatchesPython) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("ab"), "YWI=");
  EXPECT_EQ(Base64Encode("abc"), "YWJj");
  EXPECT_EQ(Base64Encode(std::string("a\0\xff\x10", 4)), "YQD/EA==");
  EXPECT_EQ(Base64Decode("YWI="), "ab");
  EXPECT_EQ(Base64Decode("YQD/EA=="), std::string("a\0\xff\x10", 4));
  EXPECT_EQ(Base64Decode(""), "");
}

TEST(Base64, RefusesMalformed) {
  EXPECT_FALSE(Base64Decode("YWI"));
  EXPECT_FALSE(Base64Decode("Y*I="));
  EXPECT_FALSE(Base64Decode("YW=I"));
  EXPECT_FALSE(Base64Decode("YQ==YWJj"));
}

}  // namespace
}  // namespace zarrd
