// zarrd's configuration file (JSON): stores, listen addresses, limits, prototypes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/codec/gpu_decode_plan.h"
#include "common/kvstore/object_store.h"
#include "common/util/status.h"

namespace zarrd::server {

struct StoreConfig {
  std::string name;
  std::string kind = "local";  // "local" | "memory" | "gpu" | "s3" | "http"
  std::string root;            // local stores: a directory, relative to the config file
  S3StoreOptions s3;           // s3 stores
  HttpStoreOptions http;       // http stores
  bool read_only = false;
  bool fsync = false;
  std::string device = "0";              // gpu stores: UUID or ordinal
  uint64_t capacity_bytes = 1ull << 30;  // gpu stores: chunk bytes held at most
};

// A GPU the server serves DEVICE results from, with its pool.
struct DeviceConfig {
  std::string device;                // UUID ("GPU-...") or ordinal
  uint64_t pool_bytes = 0;           // 0: half of the device's memory
  uint64_t slab_bytes = 1ull << 30;  // pool growth step; larger results get their own slab
};

enum class PrototypeKind { kHost, kDevice };

// What the config's "arrays" list says of one array; unset fields take the server's settings.
struct ArrayOverride {
  std::string store;
  std::string path;
  std::optional<PrototypeKind> prototype;
  std::optional<GpuDecodeMode> gpu_decode;
};

// TLS for the TCP listeners (Unix sockets are guarded by their file mode and group). With a
// client CA, clients must present a certificate it signed (mTLS).
struct TlsConfig {
  std::string cert_file, key_file;  // PEM; relative to the config file
  std::string client_ca_file;       // empty: no client certificate asked for
};

struct ServerConfig {
  std::vector<StoreConfig> stores;
  // "unix:/run/zarrd/zarrd.sock", "127.0.0.1:7070", ...
  std::vector<std::string> listen = {"unix:zarrd.sock"};
  uint32_t socket_mode = 0660;
  std::string socket_group;  // empty: the server's group
  std::optional<TlsConfig> tls;
  size_t worker_threads = 0;  // 0: one per hardware thread
  // Short requests (metadata, leases, reads that decode at most 4 MiB or copy from a GPU store
  // to GPU memory) run on gRPC's callback thread instead of a worker, this many at a time; 0:
  // every request goes to a worker.
  size_t inline_requests = 2;
  // Decode threads that all streamed reads (bytes transport) share. Decoding on every core starves
  // gRPC's own sending threads; on the 16-core GPU machine half the cores did best (bench/README).
  // 0: half of the cores.
  size_t stream_decode_threads = 0;
  // Decoded bytes that all streamed reads together hold at once (bands being decoded or sent).
  uint64_t stream_buffer_bytes = uint64_t{192} << 20;
  uint64_t max_request_bytes = uint64_t{1} << 32;
  uint64_t max_result_bytes = uint64_t{1} << 36;
  uint64_t max_unary_result_bytes = 4 << 20;
  // Arrays whose decoded chunk (a whole shard for sharded arrays) exceeds this are refused at
  // create and open: a write decodes and encodes whole chunks in memory.
  uint64_t max_chunk_bytes = uint64_t{1} << 30;
  // 1 MiB measured best on the GPU machine (bench/serve_read: pieces stay in cache).
  uint32_t stream_piece_bytes = 1 << 20;
  PrototypeKind default_prototype = PrototypeKind::kHost;
  // Array overrides by name (prototype, gpu_decode). Without a prototype override, arrays of rank 0
  // or 1 (coordinates) resolve an unspecified prototype to HOST even when the default is DEVICE.
  std::vector<ArrayOverride> overrides;
  // nullopt: every visible GPU with default pools; empty: none.
  std::optional<std::vector<DeviceConfig>> devices;
  // Where DEVICE reads of zstd, blosc, gzip and zlib arrays (bytes codec + one of those) decode:
  // auto decodes reads of at least gpu_decode_min_chunks chunks on the GPU, the rest on the CPUs.
  GpuDecodeMode gpu_decode = GpuDecodeMode::kAuto;
  size_t gpu_decode_min_chunks = kGpuDecodeMinChunks;
  // Makes each device's GPU decoding buffers (DecodeBatcher) at start instead of during the first
  // large reads, which they would otherwise slow down.
  bool gpu_decode_prewarm = false;
  double lease_ttl_seconds = 300;
  uint64_t lease_quota_bytes = 0;  // per client process; 0: the pool's capacity
  // StreamBytes, the bare-transport benchmark RPC: off unless enabled; a request sends at most
  // stream_bytes_max_bytes (and a `distinct` one builds a buffer that large).
  bool enable_stream_bytes = false;
  uint64_t stream_bytes_max_bytes = uint64_t{1} << 30;
  // Prometheus text endpoint ("host:port", port 0 picks one); "" turns it off (the config key and
  // --metrics-listen also take "off").
  std::string metrics_listen = "127.0.0.1:9464";
  double shutdown_grace_seconds = 10;
  std::string log_level = "info";
};

// Parses a config document; relative store roots resolve against `base_dir`.
Result<ServerConfig> ParseConfig(const nlohmann::json& j, const std::string& base_dir);
Result<ServerConfig> LoadConfig(const std::string& path);
// A metrics address as given by the config key or --metrics-listen: "off" is "" (no endpoint).
std::string MetricsAddress(const std::string& given);
// The config `zarrd` uses without --config: one local store "local" in ./zarrd-data.
ServerConfig DefaultConfig();

// The "arrays" entry for `path` of `store`, or nullptr.
const ArrayOverride* FindOverride(const ServerConfig& config, const std::string& store,
                                  const std::string& path);

}  // namespace zarrd::server
