// Creating and deleting nodes safely: no node inside an array (its chunk keys), metadata
// documents deleted before chunks, leftover chunks of a deleted array never seen again.
// Callers hold NodeLocks::Own of the node's path.
#pragma once

#include <string>
#include <vector>

#include "common/kvstore/store.h"
#include "common/kvstore/store_handle.h"
#include "common/util/status.h"

namespace zarrd {

// FAILED_PRECONDITION when a proper ancestor of `path` is an array: below an array are its
// chunk keys, not nodes (zarr-python refuses such nodes too).
Status CheckNoArrayAbove(Store& store, const std::string& path, const std::string& what);
// Prepares `path` (no node there) for a new node: ALREADY_EXISTS when nodes exist below it,
// else deletes the keys left there (chunks of an array deleted before a crash).
Status ClearForNewNode(Store& store, const std::string& path, const std::string& what);
// Deletes `keys`: metadata documents first, so a node is gone for every reader before any of
// its chunks is, and a crash leaves only unreachable chunks.
Status DeleteKeysMetadataFirst(Store& store, const std::vector<std::string>& keys);
// Deletes the node at `path` and everything below it; returns the number of keys deleted.
// NOT_FOUND (deleting nothing) when `path` is no node nor has nodes below it, or is inside an
// array. Takes NodeLocks::Own itself.
Result<size_t> DeleteNode(const StoreHandle& store, const std::string& path);

}  // namespace zarrd
