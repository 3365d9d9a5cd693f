// Interprocess events that tell a client when a DEVICE result is complete, so the server can
// answer as soon as the result's copies are queued: the answer travels while they run, and the
// client waits on the event instead of the server waiting before it answers.
//
// An event is recorded again only after its last record completed, so a client that waits late
// waits at most for a later read's work, never too little. Events are never destroyed while the
// pool lives: a client's use of an imported event whose exporter destroyed it is undefined.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/cuda/device_pool.h"

namespace zarrd::cuda {

struct ReadyEvent {
  uint64_t id = 0;  // 1, 2, ...: a client opens each id once per server run
  IpcHandleBytes handle{};
  cudaStream_t stream = nullptr;  // the read queues its last work, or waits for it, here
  cudaEvent_t event = nullptr;
};

class ReadyEvents {
 public:
  // `on_failure` hears of work that failed after its read had answered (the client's wait on
  // the event fails too).
  ReadyEvents(int device, size_t capacity, std::function<void(const Status&)> on_failure = {});
  ~ReadyEvents();  // waits for the events in flight
  ReadyEvents(const ReadyEvents&) = delete;
  ReadyEvents& operator=(const ReadyEvents&) = delete;

  // A free event and its stream; nullptr when `capacity` events are in flight (the caller then
  // waits for its work itself).
  Result<ReadyEvent*> Acquire();
  // Records the event after the work queued on its stream. `hold` (memory the work reads or
  // writes) is let go once the event completes, and the event is free again.
  Status Record(ReadyEvent* event, std::vector<std::shared_ptr<const void>> hold);
  // For a read that failed: waits for the work queued on the event's stream and frees it.
  Status Abandon(ReadyEvent* event);
  size_t created() const;

 private:
  struct InFlight {
    ReadyEvent* event;
    std::vector<std::shared_ptr<const void>> hold;
  };
  void Reap();

  const int device_;
  const size_t capacity_;
  const std::function<void(const Status&)> on_failure_;
  mutable std::mutex mutex_;
  std::condition_variable in_flight_added_;
  std::vector<std::unique_ptr<ReadyEvent>> events_;
  std::deque<ReadyEvent*> free_;  // oldest freed first
  std::deque<InFlight> in_flight_;
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace zarrd::cuda
