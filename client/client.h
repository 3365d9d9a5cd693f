// The C++ client of zarrd: typed reads and writes into and from caller buffers, metadata, and
// registered host shared memory. Errors come back as zarrd::Status with the server's code.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/index/band_plan.h"
#include "common/util/status.h"
#include "proto/error_detail.h"
#include "zarrd/v1/zarrd.grpc.pb.h"

namespace zarrd::client {

namespace pb = ::zarrd::v1;

// A selection from text: ParseSelection's items ("1, ::2, ...") and index lists in brackets.
// BASIC: text with a list becomes ORTHOGONAL ("[1,5,-1], :" is zarr's oindex). VECTORIZED
// (points): one list per dimension, all of one length, slices for the rest ("[0,5], [3,3]").
// BLOCK: chunk indices and slices of them ("1, 0:2", zarr's blocks).
Result<pb::Selection> SelectionFromText(const std::string& text,
                                        pb::SelectionMode mode = pb::SELECTION_MODE_BASIC);
// numpy's result shape of `selection` over an array of `shape` and `chunks`.
Result<std::vector<int64_t>> SelectionShape(const pb::Selection& selection,
                                            const std::vector<int64_t>& shape,
                                            const std::vector<int64_t>& chunks);

struct NodeInfo {
  std::string store, path;
  bool is_array = false;
  int zarr_format = 3;
  std::string data_type;    // v3 name
  std::string numpy_dtype;  // little-endian numpy typestr ("<M8[ns]"); empty from older servers
  std::vector<int64_t> shape, chunks;
  nlohmann::json metadata, attributes;
  size_t item_size() const;  // 0 for variable-length strings
  // String data: "|O" (variable-length), "|S<n>", "<U<n>".
  bool is_strings() const { return data_type == "string" || data_type == "bytes"; }
  uint64_t num_bytes() const;  // saturates at UINT64_MAX
};

// A POSIX shared-memory region that zarrd created for this process, mapped on both sides (its
// name is unlinked once mapped here). Destroying it
// unregisters it through its Client, so it must not outlive that Client.
class HostRegion {
 public:
  ~HostRegion();
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& id() const { return id_; }
  const std::string& shm_name() const { return shm_name_; }

 private:
  friend class Client;
  HostRegion() = default;
  pb::Zarrd::Stub* stub_ = nullptr;
  std::string id_, shm_name_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// TLS to a TCP listener of zarrd: the CA that signed the server's certificate, and for mTLS the
// client's certificate and key (PEM files). An empty ca_file means no TLS.
struct TlsOptions {
  std::string ca_file, cert_file, key_file;
};

class Client {
 public:
  // "unix:/path/zarrd.sock" or "host:port"; waits up to `timeout_s` for the server.
  // `channel_args` are extra integer gRPC channel arguments (e.g. "grpc.http2.max_frame_size").
  static Result<std::unique_ptr<Client>> Connect(
      const std::string& address, double timeout_s = 10, const TlsOptions& tls = {},
      const std::vector<std::pair<std::string, int>>& channel_args = {});

  const pb::ServerInfoResponse& server_info() const { return info_; }
  Result<pb::ServerInfoResponse> RefreshServerInfo();

  Result<NodeInfo> GetNode(const std::string& store, const std::string& path);
  Result<NodeInfo> CreateArray(const std::string& store, const std::string& path,
                               const nlohmann::json& metadata,
                               const nlohmann::json& attributes = nullptr, bool overwrite = false);
  Result<NodeInfo> CreateGroup(const std::string& store, const std::string& path, int zarr_format,
                               const nlohmann::json& attributes = nlohmann::json::object());
  Result<std::vector<pb::ListNodesResponse::Entry>> List(const std::string& store,
                                                         const std::string& path);
  Result<uint64_t> Delete(const std::string& store, const std::string& path);
  Result<NodeInfo> SetAttributes(const std::string& store, const std::string& path,
                                 const nlohmann::json& attributes);
  Result<NodeInfo> Resize(const std::string& store, const std::string& path,
                          const std::vector<int64_t>& shape);
  // Writes the consolidated metadata of the group at `path` (zarr's consolidate_metadata).
  Result<pb::ConsolidateResponse> Consolidate(const std::string& store, const std::string& path);

  // Reads the selection into `out` (exactly the result's size). Over a Unix socket, results of
  // 64 KiB to 64 MiB are decoded by the server into a scratch shared-memory region this client
  // keeps, then copied out (no bytes cross the socket). Otherwise: one message when it fits the
  // server's unary limit, else streams written piece by piece into `out`, up to read_streams()
  // in parallel, each for a band of the first selected dimension (16 MiB at least). Bands are
  // planned by PlanBands (common/index/band_plan.h) from the array's shape and chunks: this form
  // asks the server for them (one GetNode) when a read is banded.
  Status Get(const std::string& store, const std::string& path, const pb::Selection& selection,
             void* out, size_t size, pb::ArrayDescriptor* descriptor = nullptr,
             pb::Prototype prototype = pb::PROTOTYPE_HOST);
  // The same, with the node as GetNode gave it: no GetNode round trip.
  Status Get(const NodeInfo& node, const pb::Selection& selection, void* out, size_t size,
             pb::ArrayDescriptor* descriptor = nullptr,
             pb::Prototype prototype = pb::PROTOTYPE_HOST);
  // String arrays (NodeInfo::is_strings): the result in its wire form (see ArrayDescriptor in
  // proto/zarrd/v1/zarrd.proto), whose size the server knows once it has read it; one message
  // when it fits the unary limit, else one stream.
  Result<std::string> GetStrings(const NodeInfo& node, const pb::Selection& selection,
                                 pb::ArrayDescriptor* descriptor = nullptr);
  // Writes `size` bytes (C order, little-endian) into the selection, streaming when large.
  Status Set(const std::string& store, const std::string& path, const pb::Selection& selection,
             const void* in, size_t size);

  // Creates, maps and registers a shared-memory region of `size` bytes.
  Result<std::unique_ptr<HostRegion>> CreateHostRegion(size_t size);
  Status GetInto(const std::string& store, const std::string& path, const pb::Selection& selection,
                 const HostRegion& region, uint64_t offset, uint64_t nbytes,
                 pb::ArrayDescriptor* descriptor = nullptr);
  Status SetFrom(const std::string& store, const std::string& path, const pb::Selection& selection,
                 const HostRegion& region, uint64_t offset, uint64_t nbytes);

  pb::Zarrd::Stub& stub() { return *stub_; }
  grpc::ChannelInterface* channel() const { return channel_.get(); }
  bool use_shared_memory() const { return use_shared_memory_; }
  // Off: Get uses the bytes transport only (also chosen when the server cannot map our regions).
  void set_use_shared_memory(bool on) { use_shared_memory_ = on; }
  // Over shared memory, Get reads results up to `max_bytes` through one reused scratch region,
  // and larger ones in bands of about `band_bytes` cut on chunk edges, kScratchBandsInFlight at
  // a time, each through a region of its own (defaults 64 and 32 MiB).
  void set_scratch_sizes(size_t max_bytes, size_t band_bytes) {
    scratch_max_bytes_ = std::max<size_t>(1, max_bytes);
    scratch_band_bytes_ = std::clamp<size_t>(band_bytes, 1, scratch_max_bytes_);
  }
  static constexpr size_t kScratchBandsInFlight = 4;
  size_t read_streams() const { return read_streams_; }
  // Streams a large Get uses at most, each for a band of at least `min_band_bytes`.
  void set_read_streams(size_t n, size_t min_band_bytes = 16 << 20) {
    read_streams_ = std::max<size_t>(1, n);
    min_band_bytes_ = std::max<size_t>(1, min_band_bytes);
  }

 private:
  struct Band {
    pb::Selection selection;
    uint64_t offset, nbytes;  // where the band's bytes go in the result
  };
  Status GetWithNode(const std::string& store, const std::string& path, const NodeInfo* node,
                     const pb::Selection& selection, void* out, size_t size,
                     pb::ArrayDescriptor* descriptor, pb::Prototype prototype);
  // PlanBands of a basic selection over `node` (fetched when null); none when the selection is
  // not basic or its result is not `size` bytes.
  Result<std::vector<Band>> Bands(const std::string& store, const std::string& path,
                                  const NodeInfo* node, const pb::Selection& selection,
                                  const BandLimits& limits, uint64_t size);
  // Reads through a scratch region into `out`; false when the server cannot use this process's
  // shared memory now (the caller reads bytes instead).
  Result<bool> GetThroughScratch(const std::string& store, const std::string& path,
                                 const pb::Selection& selection, void* out, size_t size,
                                 pb::ArrayDescriptor* descriptor);
  // Bands through scratch regions, kScratchBandsInFlight at a time; false as above.
  Result<bool> GetScratchBands(const std::string& store, const std::string& path,
                               const std::vector<Band>& bands, void* out, size_t size,
                               pb::ArrayDescriptor* descriptor);
  Status GetBands(const std::string& store, const std::string& path, const std::vector<Band>& bands,
                  void* out, size_t size, pb::ArrayDescriptor* descriptor);
  // The channel band `b` of a banded read streams on: the client's own for band 0, and for the
  // others channels of their own connection, made on first use (streams that share one HTTP/2
  // connection share its transport's one lock and socket).
  grpc::ChannelInterface* BandChannel(size_t b);
  // A scratch region of at least `size` bytes, from the free list or new.
  Result<std::unique_ptr<HostRegion>> TakeScratch(size_t size);
  void ReturnScratch(std::unique_ptr<HostRegion> region);
  // Drops the kept scratch regions without unregistering them: the server no longer knows them.
  void ForgetScratch();

  std::shared_ptr<grpc::Channel> channel_;
  std::string address_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  grpc::ChannelArguments channel_args_;
  std::mutex band_mutex_;
  std::vector<std::shared_ptr<grpc::Channel>> band_channels_;  // bands 1, 2, ...
  std::unique_ptr<pb::Zarrd::Stub> stub_;
  pb::ServerInfoResponse info_;
  size_t read_streams_ = 2;
  size_t min_band_bytes_ = 16 << 20;
  std::atomic<bool> use_shared_memory_{false};
  size_t scratch_max_bytes_ = 64 << 20;
  size_t scratch_band_bytes_ = 32 << 20;
  std::mutex scratch_mutex_;
  std::vector<std::unique_ptr<HostRegion>> scratch_;  // destroyed before stub_ (declared after)
};

// Asks the gRPC health service of the zarrd at `address` (grpc.health.v1.Health/Check, the
// whole server): true when it answers SERVING, false when it answers otherwise (e.g. while
// draining); UNAVAILABLE when nothing answers within `timeout_s`.
Result<bool> CheckHealth(const std::string& address, double timeout_s = 5,
                         const TlsOptions& tls = {});

}  // namespace zarrd::client
