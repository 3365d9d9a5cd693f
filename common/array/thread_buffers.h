// Scratch buffers a thread keeps from chunk to chunk (encoded and decoded chunks), so that a
// read does not map and fault in a fresh multi-MiB allocation per chunk. An idle pool thread
// frees its own: reads of 64 MiB chunks left a few hundred MiB resident in them otherwise.
#pragma once

#include "common/util/bytes.h"

namespace zarrd {

// This thread's buffer `which` (0, 1 or 2).
Bytes& ThreadBuffer(int which);

}  // namespace zarrd
