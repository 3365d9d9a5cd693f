// The service's background thread: at start it removes the temporaries of writes a crash left;
// then every 250 ms it drops the host regions, leases and device regions of client processes
// that exited and leases that expired, and once the server has been idle a tick it gives cached
// buffers and freed heap back to the system.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "server/service_state.h"

namespace zarrd::server {

class Housekeeping {
 public:
  explicit Housekeeping(ServiceState& state);
  ~Housekeeping();  // stops and joins the thread

 private:
  void RemoveStaleTemporaries();
  void TrimWhenIdle();

  ServiceState& state_;
  uint64_t completed_at_last_tick_ = 0, completed_at_trim_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: it uses the members above
};

}  // namespace zarrd::server
