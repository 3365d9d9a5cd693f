#include "common/index/selection.h"

#include <gtest/gtest.h>

namespace zarrd {
namespace {

std::vector<int64_t> Indices(const DimSelection& d) {
  std::vector<int64_t> out;
  for (int64_t k = 0; k < d.count; ++k) out.push_back(d.start + k * d.step);
  return out;
}

// Expected lists printed by numpy: np.arange(7)[slice].tolist().
TEST(Selection, SlicesMatchNumpy) {
  const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
      {"::", {0, 1, 2, 3, 4, 5, 6}},
      {"1:5", {1, 2, 3, 4}},
      {"-3:", {4, 5, 6}},
      {"::-1", {6, 5, 4, 3, 2, 1, 0}},
      {"5:1:-2", {5, 3}},
      {"-1:-8:-1", {6, 5, 4, 3, 2, 1, 0}},
      {"10:", {}},
      {"-100:3", {0, 1, 2}},
      {"3:3", {}},
      {"::3", {0, 3, 6}},
      {"6:0:-3", {6, 3}},
      {"::-10", {6}},
      {"2:-2", {2, 3, 4}},
      {"-2:2:-1", {5, 4, 3}},
      {"1:100:4", {1, 5}},
      {"::-9223372036854775808", {6}},
      {"::9223372036854775807", {0}},
      {"9223372036854775807:-9223372036854775808:-3", {6, 3, 0}},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    auto sel = ParseSelection(text);
    ASSERT_TRUE(sel.ok()) << sel.status().ToString();
    auto r = ResolveSelection(*sel, {7});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Indices(r->dims[0]), expected);
    EXPECT_EQ(r->result_shape, std::vector<int64_t>{static_cast<int64_t>(expected.size())});
  }
}

TEST(Selection, IntegersDropDimensionsAndCountFromTheEnd) {
  auto r = ResolveSelection(*ParseSelection("-1, 2:4"), {5, 6, 7});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->dims[0].start, 4);
  EXPECT_TRUE(r->dims[0].dropped);
  EXPECT_EQ(r->result_shape, (std::vector<int64_t>{2, 7}));  // numpy: a[-1, 2:4].shape
}

TEST(Selection, EllipsisExpandsInTheMiddle) {
  auto r = ResolveSelection(*ParseSelection("1, ..., ::2"), {3, 4, 5, 6});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->result_shape, (std::vector<int64_t>{4, 5, 3}));  // numpy: a[1, ..., ::2].shape
  auto all = ResolveSelection(*ParseSelection("..."), {2, 3});
  EXPECT_EQ(all->result_shape, (std::vector<int64_t>{2, 3}));
  auto scalar = ResolveSelection(*ParseSelection("1, 2"), {2, 3});
  EXPECT_TRUE(scalar->result_shape.empty());
  EXPECT_EQ(scalar->num_elements(), 1);
}

TEST(Selection, ErrorsUseNumpysRules) {
  auto out_of_range = ResolveSelection(*ParseSelection("5"), {5});
  EXPECT_EQ(out_of_range.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(out_of_range.status().message().find("out of bounds for axis 0 with size 5"),
            std::string::npos);
  EXPECT_EQ(ResolveSelection(*ParseSelection("-6"), {5}).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(ResolveSelection(*ParseSelection("::0"), {5}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveSelection(*ParseSelection("1, 2"), {5}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveSelection(*ParseSelection("..., ..."), {5}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseSelection("1:2:3:4").ok());
  EXPECT_FALSE(ParseSelection("abc").ok());
  EXPECT_FALSE(ParseSelection("99999999999999999999").ok());
}

TEST(Selection, HugeAndExtremeBoundsClampWithoutOverflow) {
  const int64_t big = INT64_MAX, small = INT64_MIN;
  Selection sel = {SelectionItem::Slice(small, big, big)};
  auto r = ResolveSelection(sel, {10});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Indices(r->dims[0]), (std::vector<int64_t>{0}));
  Selection rev = {SelectionItem::Slice(big, small, small + 1)};
  auto q = ResolveSelection(rev, {10});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(Indices(q->dims[0]), (std::vector<int64_t>{9}));
}

TEST(Selection, TextRoundTrip) {
  auto sel = ParseSelection(" 3, :, 1:9:2, ..., ::-1 ");
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(SelectionToString(*sel), "3, :, 1:9:2, ..., ::-1");
}

}  // namespace
}  // namespace zarrd
