#include "common/metadata/node_lifecycle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/array/array.h"
#include "common/metadata/group.h"
#include "common/testing/test_util.h"

using zarrd::testing::ForwardingStore;
using zarrd::testing::Pattern;
using zarrd::testing::V3Meta;

namespace zarrd {
namespace {

using nlohmann::json;

const json kBytes = json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])");

std::vector<int32_t> ReadAll(Array& array, size_t n) {
  std::vector<int32_t> out(n);
  EXPECT_TRUE(array.Read({}, out.data(), n * 4).ok());
  return out;
}

// Below an array are its chunk keys ("P/c/0" with v3's default encoding): a group "P/c" there,
// deleted again, took P's chunks with it.
TEST(NodeLifecycle, NoNodeInsideAnArray) {
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "P", V3Meta({8}, {2}, kBytes));
  const auto values = Pattern(8);
  ASSERT_TRUE(array->Write({}, values.data(), 32).ok());
  const auto keys = *store->List("");
  EXPECT_EQ(CreateGroup(store, "P/c", {}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(CreateGroup(store, "P/c/0/x", {}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Array::Create(store, "P/d", V3Meta({1}, {1}, kBytes)).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(DeleteNode(store, "P/c").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(DeleteNode(store, "P/c/0").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store->List(""), keys);
  EXPECT_EQ(ReadAll(**Array::Open(store, "P"), 8), values);
}

TEST(NodeLifecycle, DeletingWhatIsNoNodeDeletesNothing) {
  StoreHandle store(MakeMemoryStore());
  const uint8_t junk[1] = {1};
  ASSERT_TRUE(store->Set("loose/key", ByteView(junk, 1)).ok());
  EXPECT_EQ(DeleteNode(store, "loose").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(DeleteNode(store, "absent").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->List("")->size(), 1u);
  // The root without metadata but with nodes below it is deleted as a whole.
  ASSERT_TRUE(CreateGroup(store, "g", {}).ok());
  EXPECT_EQ(DeleteNode(store, "").value(), 2u);
  EXPECT_TRUE(store->List("")->empty());
}

// Records the order of deletes.
class DeleteLog : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Status Delete(const std::string& key) override {
    deleted.push_back(key);
    return ForwardingStore::Delete(key);
  }
  std::vector<std::string> deleted;
};

// Metadata first: a delete that stops half-way leaves unreachable chunks, never an array whose
// chunks are partly gone.
TEST(NodeLifecycle, DeleteRemovesMetadataBeforeChunks) {
  auto log = std::make_shared<DeleteLog>(MakeMemoryStore());
  const StoreHandle store(log);
  ASSERT_TRUE(CreateGroup(store, "g", {}).ok());
  auto array = *Array::Create(store, "g/a", V3Meta({8}, {2}, kBytes));
  const auto values = Pattern(8);
  ASSERT_TRUE(array->Write({}, values.data(), 32).ok());
  EXPECT_EQ(DeleteNode(store, "g").value(), 6u);
  ASSERT_EQ(log->deleted.size(), 6u);
  EXPECT_EQ(log->deleted[0], "g/a/zarr.json");
  EXPECT_EQ(log->deleted[1], "g/zarr.json");
  EXPECT_TRUE(log->List("")->empty());
}

// Chunks left by a delete that crashed before its chunks went are no part of a new array.
TEST(NodeLifecycle, NewArrayDoesNotSeeLeftoverChunks) {
  StoreHandle store(MakeMemoryStore());
  auto old = *Array::Create(store, "a", V3Meta({8}, {2}, kBytes));
  const auto values = Pattern(8);
  ASSERT_TRUE(old->Write({}, values.data(), 32).ok());
  ASSERT_TRUE(store->Delete("a/zarr.json").ok());  // the crash: metadata gone, chunks not
  auto fresh = *Array::Create(store, "a", V3Meta({8}, {2}, kBytes));
  EXPECT_EQ(ReadAll(*fresh, 8), std::vector<int32_t>(8, 0));
  EXPECT_EQ(*store->List(""), std::vector<std::string>{"a/zarr.json"});
  // Nodes below a path are no leftovers: an array is not created over them.
  ASSERT_TRUE(CreateGroup(store, "h/inner", {}).ok());
  EXPECT_EQ(Array::Create(store, "h", V3Meta({1}, {1}, kBytes)).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(OpenGroup(*store, "h/inner").ok());
}

// A handle opened before a delete writes nothing after it: ABORTED, and no key comes back.
TEST(NodeLifecycle, WritesThroughAHandleOfADeletedArrayFail) {
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "a", V3Meta({8}, {2}, kBytes));
  const auto values = Pattern(8);
  ASSERT_TRUE(array->Write({}, values.data(), 32).ok());
  ASSERT_TRUE(DeleteNode(store, "a").ok());
  EXPECT_TRUE(array->stale());
  EXPECT_EQ(array->Write({}, values.data(), 32).code(), StatusCode::kAborted);
  EXPECT_EQ(array->SetAttributes({{"k", 1}}).code(), StatusCode::kAborted);
  std::vector<int32_t> out(8);
  EXPECT_EQ(array->Read({}, out.data(), 32).code(), StatusCode::kAborted);
  EXPECT_TRUE(store->List("")->empty());
  EXPECT_EQ(Array::Open(store, "a").status().code(), StatusCode::kNotFound);
}

// Writers race a delete: each write lands whole before it or fails, and afterwards no key is
// left under the array's path.
TEST(NodeLifecycle, DeleteRacingWritesLeavesNothing) {
  StoreHandle store(MakeMemoryStore());
  auto array = *Array::Create(store, "a", V3Meta({64, 64}, {8, 8}, kBytes));
  const auto values = Pattern(64 * 64);
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, aborted{0}, other{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; ++t) {
    writers.emplace_back([&] {
      while (!stop) {
        Status s = array->Write({}, values.data(), values.size() * 4);
        (s.ok() ? ok : s.code() == StatusCode::kAborted ? aborted : other)++;
      }
    });
  }
  while (ok < 3) std::this_thread::yield();
  ASSERT_TRUE(DeleteNode(store, "a").ok());
  while (aborted < 3) std::this_thread::yield();
  stop = true;
  for (auto& w : writers) w.join();
  EXPECT_EQ(other, 0);
  EXPECT_TRUE(store->List("")->empty());
}

}  // namespace
}  // namespace zarrd
