// ReadNodeTree against zarr-python 3's consolidated metadata (the zarrita fixture) and against
// the stored documents, with depth limits and a copy that lies.
#include "common/array/node_tree.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/testing/test_util.h"

namespace zarrd {
namespace {

using nlohmann::json;

std::vector<std::string> Paths(const NodeTree& tree) {
  std::vector<std::string> out;
  for (const auto& n : tree.nodes) out.push_back(n.path);
  return out;
}

// What each node is, for comparing two trees: its path and its document.
std::vector<std::string> Described(const NodeTree& tree) {
  std::vector<std::string> out;
  for (const auto& n : tree.nodes) {
    if (const auto* a = std::get_if<ArrayMetadata>(&n.metadata)) {
      out.push_back(n.path + " " + ToV3Json(*a).dump());
    } else {
      out.push_back(n.path + " group " + std::get<GroupMetadata>(n.metadata).attributes.dump());
    }
  }
  return out;
}

TEST(NodeTree, ZarrPython3ConsolidatedEqualsTheDocuments) {
  const auto root = std::filesystem::path(testing::FixturesDir()) / "zarrita/v3/data.zarr";
  auto store = OpenLocalStore(root.string());
  ASSERT_TRUE(store.ok());
  auto copy = ReadNodeTree(StoreHandle(*store), "consolidated", 0, true);
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_TRUE(copy->consolidated);
  // The entries zarr-python 3 wrote: 1d.chunked.i2, 2d.contiguous.i2, nested, nested/1d.i2.
  EXPECT_EQ(Paths(*copy),
            (std::vector<std::string>{"consolidated", "consolidated/1d.chunked.i2",
                                      "consolidated/2d.contiguous.i2", "consolidated/nested",
                                      "consolidated/nested/1d.i2"}));
  auto documents = ReadNodeTree(StoreHandle(*store), "consolidated", 0, false);
  ASSERT_TRUE(documents.ok()) << documents.status().ToString();
  EXPECT_FALSE(documents->consolidated);
  auto a = Described(*copy), b = Described(*documents);
  EXPECT_EQ(std::vector<std::string>(a.begin() + 1, a.end()),
            std::vector<std::string>(b.begin() + 1, b.end()));
  auto children = ReadNodeTree(StoreHandle(*store), "consolidated", 1, true);
  ASSERT_TRUE(children.ok());
  EXPECT_EQ(Paths(*children).size(), 4u);  // the group and its three children
  auto from_documents = ReadNodeTree(StoreHandle(*store), "consolidated", 1, false);
  ASSERT_TRUE(from_documents.ok());
  EXPECT_EQ(Paths(*from_documents), Paths(*children));
}

TEST(NodeTree, MissingGroupAndLyingCopy) {
  StoreHandle store(MakeMemoryStore());
  EXPECT_EQ(ReadNodeTree(store, "nowhere", 0, true).status().code(), StatusCode::kNotFound);
  const std::string doc =
      json{{"zarr_format", 3},
           {"node_type", "group"},
           {"consolidated_metadata",
            {{"kind", "inline"},
             {"must_understand", false},
             {"metadata", {{"bad", {{"zarr_format", 3}, {"node_type", "array"}}}}}}}}
          .dump();
  ASSERT_TRUE(
      store->Set("g/zarr.json", ByteView(reinterpret_cast<const uint8_t*>(doc.data()), doc.size()))
          .ok());
  auto tree = ReadNodeTree(store, "g", 0, true);
  EXPECT_EQ(tree.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(tree.status().message().find("\"bad\""), std::string::npos) << tree.status().message();
  auto documents = ReadNodeTree(store, "g", 0, false);  // no node below it in the store
  ASSERT_TRUE(documents.ok()) << documents.status().ToString();
  EXPECT_EQ(Paths(*documents), std::vector<std::string>{"g"});
}

}  // namespace
}  // namespace zarrd
