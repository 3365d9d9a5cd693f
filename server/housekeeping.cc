#include "server/housekeeping.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <chrono>

namespace zarrd::server {

Housekeeping::Housekeeping(ServiceState& state) : state_(state) {
  thread_ = std::thread([this] {
    RemoveStaleTemporaries();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; })) {
      state_.host_regions.ReapOrphans();
      state_.devices->Reap();
      TrimWhenIdle();
    }
  });
}

Housekeeping::~Housekeeping() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Housekeeping::RemoveStaleTemporaries() {
  for (const auto& [name, s] : state_.arrays.stores()) {
    if (s.config.read_only) continue;
    auto removed = s.store->RemoveStaleTemporaries();
    if (!removed.ok()) {
      spdlog::warn("store {}: {}", name, removed.status().ToString());
    } else if (*removed > 0) {
      spdlog::info("store {}: removed {} temporary files of unfinished writes", name, *removed);
    }
  }
}

void Housekeeping::TrimWhenIdle() {
  const uint64_t completed = state_.requests.completed();
  const bool quiet_tick = completed == completed_at_last_tick_ && state_.requests.in_flight() == 0;
  completed_at_last_tick_ = completed;
  if (!quiet_tick || completed == completed_at_trim_) return;
  completed_at_trim_ = completed;
  state_.band_buffers.Clear();
  state_.stream_bytes_source.Clear();
  ::malloc_trim(0);
}

}  // namespace zarrd::server
