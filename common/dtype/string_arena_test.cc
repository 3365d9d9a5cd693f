#include "common/dtype/string_arena.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/dtype/dtype.h"
#include "common/dtype/fill_value.h"

namespace zarrd {
namespace {

TEST(StringArena, HandlesOutliveTheirVectors) {
  StringArena arena;
  uint8_t handles[3 * kStringHandleSize];
  ASSERT_TRUE(arena.Adopt({"a", "", "héllo"}, handles).ok());
  EXPECT_EQ(LoadStringHandle(handles), "a");
  EXPECT_EQ(LoadStringHandle(handles + 8), "");
  EXPECT_EQ(LoadStringHandle(handles + 16), "héllo");
  EXPECT_EQ(arena.bytes(), StringArena::MemoryOf(3, 7));
  uint8_t null[8] = {};
  EXPECT_EQ(LoadStringHandle(null), "");
}

TEST(StringArena, AdoptsFromManyThreads) {
  StringArena arena;
  std::vector<std::vector<uint8_t>> out(8, std::vector<uint8_t>(100 * kStringHandleSize));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::string> strings;
      for (int i = 0; i < 100; ++i) strings.push_back(std::to_string(t * 1000 + i));
      ASSERT_TRUE(arena.Adopt(std::move(strings), out[t].data()).ok());
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 8; ++t) {
    for (int i = 0; i < 100; ++i) {
      EXPECT_EQ(LoadStringHandle(out[t].data() + i * 8), std::to_string(t * 1000 + i));
    }
  }
}

TEST(StringArena, PastItsBudgetItKeepsNothingMoreAndSaysWhich) {
  const uint64_t one = StringArena::MemoryOf(2, 6);  // {"abc", "def"}
  StringArena arena(2 * one, "max_result_bytes");
  uint8_t first[16], second[16], third[16] = {};
  ASSERT_TRUE(arena.Adopt({"abc", "def"}, first).ok());
  ASSERT_TRUE(arena.Adopt({"ghi", "jkl"}, second).ok());
  EXPECT_EQ(arena.bytes(), 2 * one);
  Status refused = arena.Adopt({"mno", "pqr"}, third);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("max_result_bytes (" + std::to_string(2 * one) + " bytes)"),
            std::string::npos)
      << refused.ToString();
  EXPECT_EQ(arena.bytes(), 2 * one);
  EXPECT_EQ(LoadStringHandle(third), "");  // no handle written
  EXPECT_EQ(LoadStringHandle(first + 8), "def");
  EXPECT_EQ(LoadStringHandle(second), "ghi");
  EXPECT_EQ(arena.Fits(1).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(StringArena(one).Fits(one).ok());
}

TEST(StringArena, InternedStringsAreSharedWhileHeldAndThenReleased) {
  EXPECT_EQ(InternString("x"), InternString(std::string("x")));
  EXPECT_NE(InternString("x"), InternString("y"));
  std::weak_ptr<const std::string> watch;
  {
    FillValue fill = StringFillValue("a fill value no other test uses");
    watch = InternString("a fill value no other test uses");
    EXPECT_EQ(watch.lock().get(), &LoadStringHandle(fill.data()));
    FillValue copy = fill;
    fill = FillValue();
    EXPECT_FALSE(watch.expired());  // the copy holds it
    EXPECT_EQ(LoadStringHandle(copy.data()), "a fill value no other test uses");
  }
  EXPECT_TRUE(watch.expired());  // metadata of any number of distinct fill values: no growth
  EXPECT_EQ(*InternString("a fill value no other test uses"), "a fill value no other test uses");
}

TEST(StringArena, InterningFromManyThreadsWhileHoldersComeAndGo) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string text = "label " + std::to_string((i + t) % 7);
        SharedString a = InternString(text), b = InternString(text);
        if (a != b || *a != text) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// numpy's typestrs, as zarr 2.13 writes them in .zarray.
TEST(StringDataTypes, V2Typestrs) {
  auto o = ParseV2DataType("|O");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->dtype, DataType::kString);
  EXPECT_EQ(o->string_width, 0u);
  auto s = ParseV2DataType("|S5");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dtype, DataType::kBytes);
  EXPECT_EQ(s->string_width, 5u);
  auto u = ParseV2DataType(">U12");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->dtype, DataType::kString);
  EXPECT_EQ(u->endian, Endian::kBig);
  EXPECT_EQ(u->string_width, 12u);
  EXPECT_EQ(V2Typestr(DataType::kString, Endian::kLittle, {}, 3), "<U3");
  EXPECT_EQ(V2Typestr(DataType::kBytes, Endian::kLittle, {}, 3), "|S3");
  EXPECT_EQ(V2Typestr(DataType::kBytes, Endian::kLittle, {}, 0), "|O");
  for (const char* bad : {"|U3", "<S3", "|S0", "<U", "|Sx", "<O"}) {
    EXPECT_FALSE(ParseV2DataType(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseV3DataType("string"), DataType::kString);
  EXPECT_EQ(*ParseV3DataType("bytes"), DataType::kBytes);
}

// zarr 2.13: fill_value 0 for "|O", base64 for "|S3" (b"ab" is "YWI="), a string for "<U3".
TEST(StringDataTypes, FillValues) {
  auto zero = ParseFillValue(0, DataType::kString, ZarrFormat::kV2);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(LoadStringHandle(zero->data()), "");
  EXPECT_EQ(FillValueToJson(*zero, DataType::kString, ZarrFormat::kV2), 0);  // as it was
  auto s = ParseFillValue("YWI=", DataType::kBytes, ZarrFormat::kV2);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(LoadStringHandle(s->data()), "ab");
  EXPECT_EQ(FillValueToJson(*s, DataType::kBytes, ZarrFormat::kV2), "YWI=");
  auto u = ParseFillValue("ab", DataType::kString, ZarrFormat::kV3);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(FillValueToJson(*u, DataType::kString, ZarrFormat::kV3), "ab");
  EXPECT_FALSE(ParseFillValue(0, DataType::kString, ZarrFormat::kV3).ok());
  EXPECT_FALSE(ParseFillValue("%%", DataType::kBytes, ZarrFormat::kV2).ok());
}

}  // namespace
}  // namespace zarrd
