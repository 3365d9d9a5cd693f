// What the service's handlers and stream reactors share: the configuration, the stores and their
// open arrays, the thread pools and buffers of the data path, the host and device memory clients
// registered, the request gate and the metrics. Built once per server; every member is safe to
// use from any thread.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "common/util/thread_pool.h"
#include "server/array_cache.h"
#include "server/buffer_cache.h"
#include "server/byte_budget.h"
#include "server/config.h"
#include "server/device_backend.h"
#include "server/host_regions.h"
#include "server/metrics.h"
#include "server/request_scope.h"
#include "server/stream_bytes_source.h"

namespace zarrd::server {

struct ServiceState {
  ServiceState(ServerConfig config, std::map<std::string, NamedStore> stores, uint64_t epoch,
               std::unique_ptr<DeviceBackend> devices, std::unique_ptr<Metrics> metrics);

  const ServerConfig config;
  const uint64_t epoch;
  ArrayCache arrays;
  ThreadPool executor;        // unary work too long for gRPC's threads; stream producers
  ThreadPool stream_decoder;  // the chunks of streamed reads
  ByteBudget stream_budget;   // bytes of bands that streams hold at once
  BufferCache band_buffers;
  StreamBytesSource stream_bytes_source;
  HostRegionRegistry host_regions;
  std::unique_ptr<DeviceBackend> devices;
  RequestGate requests;
  std::unique_ptr<Metrics> metrics;  // last: its scrape thread reads the members above
};

}  // namespace zarrd::server
