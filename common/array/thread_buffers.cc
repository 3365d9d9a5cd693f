#include "common/array/thread_buffers.h"

#include <malloc.h>

#include "common/util/thread_pool.h"

namespace zarrd {
namespace {

thread_local Bytes thread_buffers[3];

void FreeThreadBuffers() {
  size_t freed = 0;
  for (Bytes& b : thread_buffers) {
    freed += b.capacity();
    Bytes().swap(b);
  }
  if (freed > 0) ::malloc_trim(0);  // buffers below the mmap threshold went back to an arena
}

[[maybe_unused]] const bool kIdleHookSet = (ThreadPool::SetIdleHook(&FreeThreadBuffers), true);

}  // namespace

Bytes& ThreadBuffer(int which) { return thread_buffers[which]; }

}  // namespace zarrd
