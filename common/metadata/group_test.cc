#include "common/metadata/group.h"

#include <gtest/gtest.h>

#include "common/array/array.h"
#include "common/testing/test_util.h"

namespace zarrd {
namespace {

using nlohmann::json;

TEST(Group, CreateOpenAttributesBothFormats) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "", {ZarrFormat::kV3, {{"title", "root"}}}).ok());
  ASSERT_TRUE(CreateGroup(store, "v2", {ZarrFormat::kV2, {{"n", 2}}}).ok());
  EXPECT_EQ(CreateGroup(store, "v2", {}).code(), StatusCode::kAlreadyExists);
  auto root = OpenGroup(*store, "");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->attributes["title"], "root");
  auto v2 = OpenGroup(*store, "v2");
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->format, ZarrFormat::kV2);
  EXPECT_EQ(v2->attributes["n"], 2);
  ASSERT_TRUE(SetGroupAttributes(store, "v2", {{"n", 3}}).ok());
  EXPECT_EQ(OpenGroup(*store, "v2")->attributes["n"], 3);
  EXPECT_EQ(OpenGroup(*store, "nope").status().code(), StatusCode::kNotFound);
}

TEST(Group, ListsChildrenOfPeerHierarchies) {
  // zarrs' hierarchy.zarr: group a holds arrays baz and foo, and group b.
  auto store = OpenLocalStore(testing::FixturesDir() + "/zarrs/hierarchy.zarr");
  ASSERT_TRUE(store.ok());
  auto children = ListChildren(**store, "a");
  ASSERT_TRUE(children.ok()) << children.status().ToString();
  std::vector<std::string> names;
  for (const auto& c : *children) {
    names.push_back(c.name + (c.kind == NodeEntry::Kind::kArray ? ":array" : ":group"));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"baz:array", "foo:array"}));
  auto top = ListChildren(**store, "");
  ASSERT_TRUE(top.ok());
  EXPECT_GE(top->size(), 2u);
  EXPECT_TRUE(OpenGroup(**store, "a").ok());
  EXPECT_EQ(OpenGroup(**store, "a/baz").status().code(), StatusCode::kFailedPrecondition);
}

TEST(Group, OneUnreadableChildDoesNotMakeItsParentUnlistable) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "p", GroupMetadata{}).ok());
  ASSERT_TRUE(CreateGroup(store, "p/good", GroupMetadata{}).ok());
  const std::string broken = "{\"zarr_format\": 3, \"node_type\": \"gr";
  ASSERT_TRUE(store
                  ->Set("p/bad/zarr.json",
                        ByteView(reinterpret_cast<const uint8_t*>(broken.data()), broken.size()))
                  .ok());
  auto children = ListChildren(*store, "p");
  ASSERT_TRUE(children.ok()) << children.status().ToString();
  ASSERT_EQ(children->size(), 2u);
  EXPECT_EQ((*children)[0].name, "bad");
  EXPECT_EQ((*children)[0].error.rfind("DATA_LOSS: p/bad/zarr.json: not valid JSON", 0), 0u)
      << (*children)[0].error;
  EXPECT_EQ((*children)[1].name, "good");
  EXPECT_TRUE((*children)[1].error.empty());
}

TEST(Group, ArrayAndGroupDoNotShareAPath) {
  StoreHandle store(MakeMemoryStore());
  ArrayMetadata m;
  m.shape = {2};
  m.chunk_shape = {2};
  m.dtype = DataType::kUint8;
  m.fill_value = {0};
  m.codecs = json::parse(R"([{"name":"bytes"}])");
  ASSERT_TRUE(Array::Create(store, "x", m).ok());
  EXPECT_EQ(CreateGroup(store, "x", {}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(OpenGroup(*store, "x").status().code(), StatusCode::kFailedPrecondition);
}

TEST(Group, CreatesMissingParentsDownFromTheRoot) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "a", {ZarrFormat::kV3, {{"keep", 1}}}).ok());
  ASSERT_TRUE(CreateParentGroups(store, "a/b/c/t", ZarrFormat::kV2).ok());
  Bytes doc;
  ASSERT_TRUE(*store->Get(".zgroup", &doc));
  EXPECT_EQ(json::parse(std::string(doc.begin(), doc.end())), json({{"zarr_format", 2}}));
  EXPECT_EQ(OpenGroup(*store, "a")->format, ZarrFormat::kV3);
  EXPECT_EQ(OpenGroup(*store, "a")->attributes["keep"], 1);
  EXPECT_EQ(OpenGroup(*store, "a/b")->format, ZarrFormat::kV2);
  EXPECT_EQ(OpenGroup(*store, "a/b/c")->format, ZarrFormat::kV2);
  EXPECT_EQ(OpenGroup(*store, "a/b/c/t").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(CreateParentGroups(store, "a/b/c/u", ZarrFormat::kV3).ok());  // idempotent
  EXPECT_EQ(OpenGroup(*store, "a/b/c")->format, ZarrFormat::kV2);
}

TEST(Group, ParentThatIsAnArrayIsRefused) {
  StoreHandle store(MakeMemoryStore());
  ArrayMetadata m;
  m.shape = {2};
  m.chunk_shape = {2};
  m.dtype = DataType::kUint8;
  m.fill_value = {0};
  m.codecs = json::parse(R"([{"name":"bytes"}])");
  ASSERT_TRUE(Array::Create(store, "x", m).ok());
  Status s = CreateParentGroups(store, "x/y", ZarrFormat::kV3);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.ToString().find("x/y"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace zarrd
