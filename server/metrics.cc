#include "server/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "common/array/engine_stats.h"

namespace zarrd::server {

namespace prom = ::prometheus;

struct Metrics::Families {
  prom::Family<prom::Counter>& requests;
  prom::Family<prom::Histogram>& latency;
  prom::Family<prom::Counter>& read_bytes;
  prom::Family<prom::Counter>& written_bytes;
  prom::Family<prom::Counter>& store_errors;
  prom::Family<prom::Counter>& chunks;
  prom::Family<prom::Gauge>& pool;
  prom::Family<prom::Gauge>& leases;
  prom::Family<prom::Gauge>& regions;
  prom::Family<prom::Gauge>& in_flight;
};

// The registry, brought up to date at every scrape.
class Metrics::Refreshing : public prom::Collectable {
 public:
  explicit Refreshing(Metrics* m) : m_(m) {}
  std::vector<prom::MetricFamily> Collect() const override {
    if (m_->refresh_) m_->refresh_();
    return m_->registry_->Collect();
  }

 private:
  Metrics* m_;
};

Result<std::unique_ptr<Metrics>> Metrics::Start(const std::string& address) {
  std::unique_ptr<Metrics> m(new Metrics());
  m->registry_ = std::make_shared<prom::Registry>();
  auto& r = *m->registry_;
  m->families_.reset(new Families{
      prom::BuildCounter()
          .Name("zarrd_requests_total")
          .Help("Requests by method and code")
          .Register(r),
      prom::BuildHistogram()
          .Name("zarrd_request_duration_seconds")
          .Help("Request latency by method")
          .Register(r),
      prom::BuildCounter()
          .Name("zarrd_read_bytes_total")
          .Help("Result bytes by prototype")
          .Register(r),
      prom::BuildCounter()
          .Name("zarrd_written_bytes_total")
          .Help("Input bytes written, by source (bytes, host_region, device)")
          .Register(r),
      prom::BuildCounter()
          .Name("zarrd_store_errors_total")
          .Help("Requests that failed in a store (DATA_LOSS, INTERNAL), by store")
          .Register(r),
      prom::BuildCounter()
          .Name("zarrd_chunks_total")
          .Help("Chunks decoded, encoded, and read as the fill value")
          .Register(r),
      prom::BuildGauge()
          .Name("zarrd_pool_bytes")
          .Help("Device pool bytes by GPU and kind")
          .Register(r),
      prom::BuildGauge().Name("zarrd_leases").Help("Live leases by GPU").Register(r),
      prom::BuildGauge().Name("zarrd_regions").Help("Registered regions by kind").Register(r),
      prom::BuildGauge().Name("zarrd_in_flight_requests").Help("Requests in flight").Register(r)});
  if (!address.empty()) {
    try {
      // A connection that never sends its request holds a civetweb thread until
      // request_timeout_ms: with two threads and civetweb's 30 s default, a few hundred half-open
      // connections stalled every scrape. A scrape asks at once, so half a second is plenty.
      m->exposer_ = std::make_unique<prom::Exposer>(
          std::vector<std::string>{"listening_ports", address, "num_threads", "16",
                                   "request_timeout_ms", "500", "enable_keep_alive", "no"});
    } catch (const std::exception& e) {
      return Unavailable("metrics: cannot listen on " + address + ": " + e.what());
    }
    m->refreshing_ = std::make_shared<Refreshing>(m.get());
    m->exposer_->RegisterCollectable(m->refreshing_);
    const auto ports = m->exposer_->GetListeningPorts();
    const std::string host = address.substr(0, address.rfind(':'));
    m->url_ =
        "http://" + host + ":" + std::to_string(ports.empty() ? 0 : ports.front()) + "/metrics";
  }
  return m;
}

Metrics::~Metrics() = default;

void Metrics::Request(const std::string& method, const std::string& store, StatusCode code,
                      double seconds) {
  families_->requests.Add({{"method", method}, {"code", StatusCodeName(code)}}).Increment();
  static const prom::Histogram::BucketBoundaries kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
      0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};
  families_->latency.Add({{"method", method}}, kBuckets).Observe(seconds);
  if (!store.empty() && (code == StatusCode::kDataLoss || code == StatusCode::kInternal)) {
    families_->store_errors.Add({{"store", store}}).Increment();
  }
}

void Metrics::BytesRead(const std::string& prototype, uint64_t n) {
  families_->read_bytes.Add({{"prototype", prototype}}).Increment(static_cast<double>(n));
}

void Metrics::BytesWritten(const std::string& source, uint64_t n) {
  families_->written_bytes.Add({{"source", source}}).Increment(static_cast<double>(n));
}

void Metrics::Update(const DeviceInventory& devices, size_t host_regions, size_t in_flight) {
  for (const DevicePoolState& p : devices.devices) {
    const std::map<std::string, uint64_t> kinds = {{"capacity", p.capacity_bytes},
                                                   {"reserved", p.reserved_bytes},
                                                   {"in_use", p.in_use_bytes},
                                                   {"leased", p.leased_bytes}};
    for (const auto& [kind, v] : kinds) {
      families_->pool.Add({{"gpu", p.gpu_uuid}, {"kind", kind}}).Set(static_cast<double>(v));
    }
    families_->leases.Add({{"gpu", p.gpu_uuid}}).Set(static_cast<double>(p.leases));
    families_->regions.Add({{"kind", "device"}, {"gpu", p.gpu_uuid}})
        .Set(static_cast<double>(p.device_regions));
  }
  families_->regions.Add({{"kind", "host"}}).Set(static_cast<double>(host_regions));
  families_->in_flight.Add({}).Set(static_cast<double>(in_flight));
  const EngineStats& e = GlobalEngineStats();
  std::lock_guard lock(mutex_);
  auto advance = [&](const char* what, const std::atomic<uint64_t>& now, uint64_t* seen) {
    const uint64_t v = now.load(std::memory_order_relaxed);
    families_->chunks.Add({{"op", what}}).Increment(static_cast<double>(v - *seen));
    *seen = v;
  };
  advance("decoded", e.chunks_decoded, &decoded_seen_);
  advance("encoded", e.chunks_encoded, &encoded_seen_);
  advance("filled", e.chunks_filled, &filled_seen_);
  advance("gpu_decoded", e.chunks_gpu_decoded, &gpu_decoded_seen_);
}

}  // namespace zarrd::server
