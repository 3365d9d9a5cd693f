// What every request does around its work, unary or streamed: it is refused while the server
// drains, counted in flight until its reply is written, and ends in one log line and one metrics
// sample.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "common/util/status.h"
#include "server/metrics.h"

namespace zarrd::server {

// The server's requests as a whole: whether new ones are taken, and how many are in flight.
class RequestGate {
 public:
  // From now on new requests are answered UNAVAILABLE; those in flight go on.
  void StartDraining() { draining_ = true; }
  bool draining() const { return draining_; }
  size_t in_flight() const { return in_flight_; }
  // Requests completed since the server started (the reaper tells idle ticks by it).
  uint64_t completed() const { return completed_; }

 private:
  friend class RequestScope;
  std::atomic<bool> draining_{false};
  std::atomic<size_t> in_flight_{0};
  std::atomic<uint64_t> completed_{0};
};

// One request from its arrival to its reply. Counted in flight for its whole life; Finish logs
// and measures it once (a scope destroyed unfinished counts as CANCELLED).
class RequestScope {
 public:
  // `store` names the store the request is about ("" if none), `what` the node or argument it
  // names, for the log line.
  RequestScope(RequestGate& gate, Metrics& metrics, const char* method, std::string store,
               std::string what);
  ~RequestScope();
  RequestScope(const RequestScope&) = delete;
  RequestScope& operator=(const RequestScope&) = delete;

  // UNAVAILABLE (reason SHUTTING_DOWN) when the server was draining as the request arrived.
  Status Admitted() const;
  // Logs and measures the request's outcome; `where` says what ran it ("inline", "worker").
  // Returns `status`.
  const Status& Finish(const Status& status, const char* where = "");
  // Names what the request is about once it is known (a stream's first message says it).
  void Name(std::string store, std::string what) {
    store_ = std::move(store);
    what_ = std::move(what);
  }
  bool finished() const { return finished_; }
  const std::string& store() const { return store_; }

 private:
  RequestGate& gate_;
  Metrics& metrics_;
  const char* method_;
  std::string store_, what_;
  bool draining_at_start_;
  bool finished_ = false;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace zarrd::server
