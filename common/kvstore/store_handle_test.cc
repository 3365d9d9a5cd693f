#include "common/kvstore/store_handle.h"

#include <gtest/gtest.h>

#include "common/kvstore/device_resident_store.h"

namespace zarrd {
namespace {

TEST(StoreHandle, CopiesShareTheLocksOfTheirStore) {
  const StoreHandle handle(MakeMemoryStore());
  const StoreHandle copy = handle;
  EXPECT_EQ(&*copy, &*handle);
  EXPECT_EQ(&copy.key_locks(), &handle.key_locks());
  EXPECT_EQ(&copy.node_locks(), &handle.node_locks());
  const uint64_t before = copy.node_locks().Generation("a");
  { auto own = handle.node_locks().Own("a"); }
  EXPECT_NE(copy.node_locks().Generation("a"), before);
}

TEST(StoreHandle, ASecondHandleOfAStoreHasLocksOfItsOwn) {
  auto store = MakeMemoryStore();
  const StoreHandle first(store), second(store);
  EXPECT_NE(&first.key_locks(), &second.key_locks());
  EXPECT_NE(&first.node_locks(), &second.node_locks());
}

TEST(DeviceResidentStore, HostStoresAreNot) {
  EXPECT_EQ(AsDeviceResident(*MakeMemoryStore()), nullptr);
}

}  // namespace
}  // namespace zarrd
