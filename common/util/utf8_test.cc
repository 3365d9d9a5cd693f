#include "common/util/utf8.h"

#include <gtest/gtest.h>

namespace zarrd {
namespace {

// Python: "aé€😀".encode("utf-8"), and bytes that b"...".decode("utf-8") refuses.
TEST(Utf8, ValidatesAsPythonDecodes) {
  EXPECT_TRUE(IsValidUtf8("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  EXPECT_TRUE(IsValidUtf8(""));
  for (const char* bad :
       {"\xff", "\xc3", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\x80"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
}

TEST(Utf8, ConvertsToAndFromUtf32) {
  char32_t out[8];
  ASSERT_EQ(Utf8ToUtf32("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 8, out), 4u);
  EXPECT_EQ(out[0], U'a');
  EXPECT_EQ(out[1], U'\u00e9');
  EXPECT_EQ(out[2], U'\u20ac');
  EXPECT_EQ(out[3], U'\U0001f600');
  EXPECT_EQ(Utf8ToUtf32("abc", 2, out), 2u);
  EXPECT_EQ(Utf8ToUtf32("\xff", 2, out), 1u);
  EXPECT_EQ(out[0], U'\ufffd');
  std::string s;
  for (char32_t c : {U'a', U'\u00e9', U'\u20ac', U'\U0001f600'}) EXPECT_TRUE(AppendUtf8(c, &s));
  EXPECT_EQ(s, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_FALSE(AppendUtf8(0x110000, &s));
}

}  // namespace
}  // namespace zarrd
