// Prometheus metrics of the service, served as text at http://ADDRESS/metrics on their own port
// (loopback by default, so only the host sees them): requests by method and code, latency
// histograms, bytes read by prototype and written by source, the engine's chunk counters, pool,
// lease and region gauges, and store errors.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/util/status.h"
#include "server/device_backend.h"

namespace prometheus {
class Collectable;
class Exposer;
class Registry;
}  // namespace prometheus

namespace zarrd::server {

class Metrics {
 public:
  // Serves on `address` ("127.0.0.1:9464"; port 0 picks one); empty: counts but serves nothing.
  static Result<std::unique_ptr<Metrics>> Start(const std::string& address);
  ~Metrics();

  // "http://127.0.0.1:PORT/metrics", or "" when not served.
  const std::string& url() const { return url_; }

  // One finished request. `store` is the store it named ("" if none).
  void Request(const std::string& method, const std::string& store, StatusCode code,
               double seconds);
  void BytesRead(const std::string& prototype, uint64_t n);
  void BytesWritten(const std::string& source, uint64_t n);
  // Gauges from the server's state, and the engine's counters.
  void Update(const DeviceInventory& devices, size_t host_regions, size_t in_flight);
  // Called before every scrape (so gauges are current); set once, before requests arrive.
  void SetRefresh(std::function<void()> refresh) { refresh_ = std::move(refresh); }

 private:
  Metrics() = default;
  struct Families;
  class Refreshing;
  std::function<void()> refresh_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<prometheus::Collectable> refreshing_;  // the exposer holds it weakly
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<Families> families_;
  std::string url_;
  std::mutex mutex_;  // engine counter snapshots
  uint64_t decoded_seen_ = 0, encoded_seen_ = 0, filled_seen_ = 0, gpu_decoded_seen_ = 0;
};

}  // namespace zarrd::server
