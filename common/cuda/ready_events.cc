#include "common/cuda/ready_events.h"

#include <chrono>
#include <cstring>

#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {

ReadyEvents::ReadyEvents(int device, size_t capacity, std::function<void(const Status&)> on_failure)
    : device_(device),
      capacity_(capacity),
      on_failure_(std::move(on_failure)),
      reaper_([this] { Reap(); }) {}

ReadyEvents::~ReadyEvents() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  in_flight_added_.notify_all();
  reaper_.join();
  cudaSetDevice(device_);
  for (auto& e : events_) {
    cudaStreamSynchronize(e->stream);
    cudaEventDestroy(e->event);
    cudaStreamDestroy(e->stream);
  }
}

size_t ReadyEvents::created() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

Result<ReadyEvent*> ReadyEvents::Acquire() {
  std::lock_guard lock(mutex_);
  if (!free_.empty()) {
    ReadyEvent* e = free_.front();
    free_.pop_front();
    return e;
  }
  if (events_.size() >= capacity_) return nullptr;
  ZARRD_RETURN_IF_ERROR(UseDevice(device_));
  auto e = std::make_unique<ReadyEvent>();
  ZARRD_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking),
                                   "ready event's stream"));
  Status s = CudaStatus(
      cudaEventCreateWithFlags(&e->event, cudaEventDisableTiming | cudaEventInterprocess),
      "interprocess event");
  cudaIpcEventHandle_t handle;
  if (s.ok()) s = CudaStatus(cudaIpcGetEventHandle(&handle, e->event), "cudaIpcGetEventHandle");
  if (!s.ok()) {
    if (e->event) cudaEventDestroy(e->event);
    cudaStreamDestroy(e->stream);
    return s;
  }
  static_assert(sizeof(handle) == sizeof(IpcHandleBytes));
  std::memcpy(e->handle.data(), &handle, sizeof(handle));
  e->id = events_.size() + 1;
  events_.push_back(std::move(e));
  return events_.back().get();
}

Status ReadyEvents::Record(ReadyEvent* event, std::vector<std::shared_ptr<const void>> hold) {
  Status s = CudaStatus(cudaEventRecord(event->event, event->stream), "ready event");
  if (!s.ok()) {
    (void)Abandon(event);
    return s;
  }
  {
    std::lock_guard lock(mutex_);
    in_flight_.push_back({event, std::move(hold)});
  }
  in_flight_added_.notify_one();
  return OkStatus();
}

Status ReadyEvents::Abandon(ReadyEvent* event) {
  Status s = CudaStatus(cudaStreamSynchronize(event->stream), "a failed read's queued work");
  std::lock_guard lock(mutex_);
  free_.push_back(event);
  return s;
}

// Events complete about in the order they were recorded, so one thread waits for each in turn.
void ReadyEvents::Reap() {
  bool device_set = false;
  std::unique_lock lock(mutex_);
  for (;;) {
    in_flight_added_.wait(lock, [&] { return stopping_ || !in_flight_.empty(); });
    if (in_flight_.empty()) return;
    InFlight done = std::move(in_flight_.front());
    in_flight_.pop_front();
    lock.unlock();
    if (!device_set) device_set = cudaSetDevice(device_) == cudaSuccess;
    // Polled, not synchronized: cudaEventSynchronize spins a core that reads need for decoding,
    // and letting go of the hold a little late costs nothing (the client waits on the event).
    cudaError_t err;
    while ((err = cudaEventQuery(done.event->event)) == cudaErrorNotReady) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    Status s = CudaStatus(err, "a result's queued copies");
    if (!s.ok() && on_failure_) on_failure_(s);
    lock.lock();
    free_.push_back(done.event);
    lock.unlock();
    done.hold.clear();
    lock.lock();
  }
}

}  // namespace zarrd::cuda
