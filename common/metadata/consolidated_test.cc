#include "common/metadata/consolidated.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/array/array.h"
#include "common/metadata/group.h"
#include "common/metadata/json_document.h"
#include "common/metadata/node_lifecycle.h"
#include "common/testing/test_util.h"

namespace zarrd {
namespace {

using nlohmann::json;

ArrayMetadata Meta(std::vector<int64_t> shape, std::vector<int64_t> chunks) {
  return testing::V3Meta(
      std::move(shape), std::move(chunks),
      json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}}));
}

json Read(Store& store, const std::string& key) {
  auto doc = ReadJsonDocument(store, key);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() && *doc ? **doc : json();
}

json V3Entries(Store& store, const std::string& group) {
  return Read(store, JoinKey(group, "zarr.json"))["consolidated_metadata"]["metadata"];
}

json V2Entries(Store& store, const std::string& group) {
  return Read(store, JoinKey(group, ".zmetadata"))["metadata"];
}

ArrayMetadata V2Meta(std::vector<int64_t> shape) {
  json zarray = {{"zarr_format", 2},      {"shape", shape},  {"chunks", {2}}, {"dtype", "<i4"},
                 {"compressor", nullptr}, {"fill_value", 0}, {"order", "C"},  {"filters", nullptr}};
  auto m = ParseV2ArrayMetadata(zarray, json(nullptr));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

TEST(Consolidated, V3AsZarrPythonWritesIt) {
  // zarr-python 3 consolidated this group (two arrays, a nested group with an array).
  auto store = OpenLocalStore(testing::FixturesDir() + "/zarrita/v3/data.zarr");
  ASSERT_TRUE(store.ok());
  auto built = BuildV3Consolidated(**store, "consolidated");
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(*built, Read(**store, "consolidated/zarr.json")["consolidated_metadata"]);
}

TEST(Consolidated, V2AsZarr2WritesIt) {
  auto store = OpenLocalStore(testing::FixturesDir() + "/zarrita/v2/data.zarr");
  ASSERT_TRUE(store.ok());
  auto built = BuildV2Consolidated(**store, "");
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(*built, Read(**store, ".zmetadata"));
}

TEST(Consolidated, V3GroupStaysCurrentThroughEveryChange) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "", {ZarrFormat::kV3, {{"title", "root"}}}).ok());
  ASSERT_TRUE(Array::Create(store, "a", Meta({4}, {2})).ok());
  ASSERT_TRUE(CreateGroup(store, "g", {ZarrFormat::kV3, {{"n", 1}}}).ok());
  ASSERT_TRUE(Array::Create(store, "g/b", Meta({6}, {2})).ok());
  auto done = ConsolidateMetadata(store, "");
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->format, ZarrFormat::kV3);
  EXPECT_EQ(done->key, "zarr.json");
  EXPECT_EQ(done->entries, 3u);
  json entries = V3Entries(*store, "");
  EXPECT_EQ(entries["a"], Read(*store, "a/zarr.json"));
  EXPECT_EQ(entries["g/b"]["shape"], json({6}));
  EXPECT_EQ(entries["g"]["attributes"], json({{"n", 1}}));
  EXPECT_EQ(entries["g"]["consolidated_metadata"],
            json({{"kind", "inline"}, {"must_understand", false}, {"metadata", json::object()}}));

  // The root's own attributes are rewritten with its consolidated metadata kept.
  ASSERT_TRUE(SetGroupAttributes(store, "", {{"title", "renamed"}}).ok());
  EXPECT_EQ(Read(*store, "zarr.json")["attributes"]["title"], "renamed");
  EXPECT_EQ(V3Entries(*store, ""), entries);
  EXPECT_TRUE(OpenGroup(*store, "").ok());

  ASSERT_TRUE(Array::Create(store, "g/c", Meta({3}, {3})).ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "g/c").ok());
  EXPECT_EQ(V3Entries(*store, "")["g/c"]["shape"], json({3}));
  // A group without consolidated metadata is left without.
  EXPECT_FALSE(Read(*store, "g/zarr.json").contains("consolidated_metadata"));

  auto b = Array::Open(store, "g/b");
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*b)->Resize({10}).ok());
  ASSERT_TRUE((*b)->SetAttributes({{"units", "m"}}).ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "g/b").ok());
  EXPECT_EQ(V3Entries(*store, "")["g/b"]["shape"], json({10}));
  EXPECT_EQ(V3Entries(*store, "")["g/b"]["attributes"]["units"], "m");

  ASSERT_TRUE(SetGroupAttributes(store, "g", {{"n", 2}}).ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "g").ok());
  EXPECT_EQ(V3Entries(*store, "")["g"]["attributes"]["n"], 2);

  ASSERT_TRUE(DeleteNode(store, "g").ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "g").ok());
  entries = V3Entries(*store, "");
  EXPECT_EQ(entries.size(), 1u) << entries.dump();
  EXPECT_TRUE(entries.contains("a"));
}

TEST(Consolidated, NestedV3GroupsAreEachRefreshed) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "", {}).ok());
  ASSERT_TRUE(CreateGroup(store, "g", {}).ok());
  ASSERT_TRUE(ConsolidateMetadata(store, "g").ok());
  ASSERT_TRUE(ConsolidateMetadata(store, "").ok());
  ASSERT_TRUE(Array::Create(store, "g/x", Meta({2}, {2})).ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "g/x").ok());
  EXPECT_TRUE(V3Entries(*store, "g").contains("x"));
  EXPECT_TRUE(V3Entries(*store, "").contains("g/x"));
  // The root's entry of g carries an empty consolidated metadata, as zarr-python writes it.
  EXPECT_TRUE(V3Entries(*store, "")["g"]["consolidated_metadata"]["metadata"].empty());
}

TEST(Consolidated, ConcurrentChangesLeaveItCurrent) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "", {}).ok());
  ASSERT_TRUE(ConsolidateMetadata(store, "").ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < 10; ++i) {
        const std::string path = "t" + std::to_string(t) + "/a" + std::to_string(i);
        Status s = Array::Create(store, path, Meta({2}, {2})).status();
        if (s.ok()) s = CreateParentGroups(store, path, ZarrFormat::kV3);
        if (s.ok()) s = RefreshConsolidatedMetadata(store, path);
        if (s.ok() && i % 2) s = SetGroupAttributes(store, "", {{"last", path}});
        if (s.ok() && i % 2) s = RefreshConsolidatedMetadata(store, "");
        if (s.ok() && i % 3 == 2) s = DeleteNode(store, path).status();
        if (s.ok() && i % 3 == 2) s = RefreshConsolidatedMetadata(store, path);
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  auto expected = BuildV3Consolidated(*store, "");
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ((*expected)["metadata"].size(), 8u + 8 * 7);  // the groups, the arrays not deleted
  EXPECT_EQ(Read(*store, "zarr.json")["consolidated_metadata"], *expected);
  EXPECT_TRUE(Read(*store, "zarr.json")["attributes"].contains("last"));
}

TEST(Consolidated, V3SkipsWhatIsNoMember) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "", {}).ok());
  ASSERT_TRUE(Array::Create(store, "a", Meta({2}, {2})).ok());
  // Below an array and below a directory without zarr.json: not members for zarr-python either.
  ASSERT_TRUE(WriteJsonDocument(*store, "a/x/zarr.json", Read(*store, "a/zarr.json")).ok());
  ASSERT_TRUE(WriteJsonDocument(*store, "dir/y/zarr.json", Read(*store, "a/zarr.json")).ok());
  auto built = BuildV3Consolidated(*store, "");
  ASSERT_TRUE(built.ok());
  EXPECT_EQ((*built)["metadata"].size(), 1u) << built->dump();
  ASSERT_TRUE(WriteJsonDocument(*store, "bad/zarr.json", {{"zarr_format", 2}}).ok());
  EXPECT_EQ(BuildV3Consolidated(*store, "").status().code(), StatusCode::kDataLoss);
}

TEST(Consolidated, V2GroupStaysCurrent) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "", {ZarrFormat::kV2, {{"title", "root"}}}).ok());
  ASSERT_TRUE(Array::Create(store, "a", V2Meta({4})).ok());
  auto done = ConsolidateMetadata(store, "");
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->key, ".zmetadata");
  EXPECT_EQ(done->entries, 3u);  // .zgroup, .zattrs, a/.zarray
  EXPECT_EQ(V2Entries(*store, "")[".zattrs"]["title"], "root");

  ASSERT_TRUE(SetGroupAttributes(store, "", {{"title", "renamed"}}).ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "").ok());
  EXPECT_EQ(V2Entries(*store, "")[".zattrs"]["title"], "renamed");

  ASSERT_TRUE(Array::Create(store, "g/b", V2Meta({6})).ok());
  ASSERT_TRUE(CreateParentGroups(store, "g/b", ZarrFormat::kV2).ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "g/b").ok());
  json entries = V2Entries(*store, "");
  EXPECT_EQ(entries["g/b/.zarray"]["shape"], json({6}));
  EXPECT_TRUE(entries.contains("g/.zgroup"));
  // Only the group that had .zmetadata has it.
  Bytes probe;
  EXPECT_FALSE(*store->Get("g/.zmetadata", &probe));

  auto a = Array::Open(store, "a");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Resize({8}).ok());
  ASSERT_TRUE((*a)->SetAttributes({{"units", "m"}}).ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "a").ok());
  entries = V2Entries(*store, "");
  EXPECT_EQ(entries["a/.zarray"]["shape"], json({8}));
  EXPECT_EQ(entries["a/.zattrs"]["units"], "m");

  ASSERT_TRUE(DeleteNode(store, "g").ok());
  ASSERT_TRUE(RefreshConsolidatedMetadata(store, "g").ok());
  entries = V2Entries(*store, "");
  EXPECT_FALSE(entries.contains("g/.zgroup"));
  EXPECT_FALSE(entries.contains("g/b/.zarray"));
}

// A store that cannot list, as plain HTTP.
class UnlistableStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Result<std::vector<std::string>> List(const std::string&) override {
    return Unimplemented("no listing");
  }
};

std::vector<std::string> Names(Store& store, const std::string& path) {
  auto children = ListChildren(store, path);
  EXPECT_TRUE(children.ok()) << children.status().ToString();
  std::vector<std::string> out;
  for (const auto& c : children.ok() ? *children : std::vector<NodeEntry>{}) {
    out.push_back(c.name + (c.kind == NodeEntry::Kind::kArray ? ":array" : ":group") +
                  (c.format == ZarrFormat::kV2 ? ":2" : ":3"));
  }
  return out;
}

TEST(Consolidated, ListsAStoreWithoutListingFromIt) {
  auto v3 = OpenLocalStore(testing::FixturesDir() + "/zarrita/v3/data.zarr");
  ASSERT_TRUE(v3.ok());
  UnlistableStore web3(*v3);
  EXPECT_EQ(Names(web3, "consolidated"),
            (std::vector<std::string>{"1d.chunked.i2:array:3", "2d.contiguous.i2:array:3",
                                      "nested:group:3"}));
  EXPECT_EQ(Names(web3, "consolidated/nested"), std::vector<std::string>{"1d.i2:array:3"});
  // Neither the root nor anything above records it.
  EXPECT_EQ(ListChildren(web3, "").status().code(), StatusCode::kUnimplemented);

  auto v2 = OpenLocalStore(testing::FixturesDir() + "/zarrita/v2/data.zarr");
  ASSERT_TRUE(v2.ok());
  UnlistableStore web2(*v2);
  auto names = Names(web2, "");
  EXPECT_EQ(names.size(), 33u);  // 32 arrays and a group
  EXPECT_EQ(names.back(), "my group with spaces:group:2");
  EXPECT_EQ(names.front(), "1d.chunked.i2:array:2");
  EXPECT_TRUE(Names(web2, "my group with spaces").empty());
}

TEST(Consolidated, RefusesWhatIsNoGroup) {
  StoreHandle store(MakeMemoryStore());
  EXPECT_EQ(ConsolidateMetadata(store, "nope").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(Array::Create(store, "a", Meta({2}, {2})).ok());
  EXPECT_EQ(ConsolidateMetadata(store, "a").status().code(), StatusCode::kFailedPrecondition);
  // Nothing to refresh: no group above has consolidated metadata.
  EXPECT_TRUE(RefreshConsolidatedMetadata(store, "a").ok());
  EXPECT_TRUE(RefreshConsolidatedMetadata(store, "gone/deeper").ok());
  // An ancestor whose document is no group's: nobody reads consolidated metadata from it.
  ASSERT_TRUE(WriteJsonDocument(*store, "broken/zarr.json", {{"zarr_format", 7}}).ok());
  EXPECT_TRUE(RefreshConsolidatedMetadata(store, "broken/x").ok());
  EXPECT_EQ(ConsolidateMetadata(store, "broken").status().code(), StatusCode::kInvalidArgument);
}

TEST(Consolidated, RefusesAZarrJsonZarrdCouldNotReadBack) {
  StoreHandle store(MakeMemoryStore());
  ASSERT_TRUE(CreateGroup(store, "", {}).ok());
  json deep = json::object();
  for (size_t i = 0; i + 4 < kMaxStoredJsonDepth; ++i) deep = json{{"d", deep}};
  ArrayMetadata m = Meta({2}, {2});
  m.attributes = deep;
  ASSERT_TRUE(Array::Create(store, "a", m).ok());
  EXPECT_EQ(ConsolidateMetadata(store, "").status().code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(Read(*store, "zarr.json").contains("consolidated_metadata"));
}

}  // namespace
}  // namespace zarrd
