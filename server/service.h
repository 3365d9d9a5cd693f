// The Zarrd gRPC service over the engine, on gRPC's callback API. Blocking engine work runs on
// the service's executor, never on gRPC's own threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/array.h"
#include "common/store.h"
#include "common/thread_pool.h"
#include "proto/error_detail.h"
#include "proto/selection_wire.h"
#include "server/buffer_cache.h"
#include "server/byte_budget.h"
#include "server/config.h"
#include "server/device_backend.h"
#include "server/host_regions.h"
#include "server/metrics.h"
#include "zarrd/v1/zarrd.grpc.pb.h"

namespace zarrd::server {

namespace pb = ::zarrd::v1;

struct NamedStore {
  StoreConfig config;
  std::shared_ptr<Store> store;
};

// GetItemStream and StreamBytes are registered raw: their pieces are written as slices over the
// decoded bands (or the diagnostic's buffer), with no copy into protobuf messages (the wire
// format is GetItemResponse all the same).
class ZarrdService final
    : public pb::Zarrd::WithRawCallbackMethod_GetItemStream<
          pb::Zarrd::WithRawCallbackMethod_StreamBytes<pb::Zarrd::CallbackService>> {
 public:
  ZarrdService(ServerConfig config, std::map<std::string, NamedStore> stores, uint64_t epoch,
               std::unique_ptr<DeviceBackend> devices, std::unique_ptr<Metrics> metrics);
  ~ZarrdService() override;

  // From now on new requests are answered UNAVAILABLE; those in flight go on.
  void StartDraining() { draining_ = true; }
  size_t in_flight() const { return in_flight_; }

  grpc::ServerUnaryReactor* ServerInfo(grpc::CallbackServerContext* ctx,
                                       const pb::ServerInfoRequest* req,
                                       pb::ServerInfoResponse* resp) override;
  grpc::ServerUnaryReactor* CreateNode(grpc::CallbackServerContext* ctx,
                                       const pb::CreateNodeRequest* req,
                                       pb::NodeInfo* resp) override;
  grpc::ServerUnaryReactor* GetNode(grpc::CallbackServerContext* ctx, const pb::NodeRequest* req,
                                    pb::NodeInfo* resp) override;
  grpc::ServerUnaryReactor* ListNodes(grpc::CallbackServerContext* ctx, const pb::NodeRequest* req,
                                      pb::ListNodesResponse* resp) override;
  grpc::ServerUnaryReactor* GetTree(grpc::CallbackServerContext* ctx, const pb::GetTreeRequest* req,
                                    pb::GetTreeResponse* resp) override;
  grpc::ServerUnaryReactor* DeleteNode(grpc::CallbackServerContext* ctx, const pb::NodeRequest* req,
                                       pb::DeleteNodeResponse* resp) override;
  grpc::ServerUnaryReactor* SetAttributes(grpc::CallbackServerContext* ctx,
                                          const pb::SetAttributesRequest* req,
                                          pb::NodeInfo* resp) override;
  grpc::ServerUnaryReactor* Resize(grpc::CallbackServerContext* ctx, const pb::ResizeRequest* req,
                                   pb::NodeInfo* resp) override;
  grpc::ServerUnaryReactor* Consolidate(grpc::CallbackServerContext* ctx,
                                        const pb::ConsolidateRequest* req,
                                        pb::ConsolidateResponse* resp) override;
  grpc::ServerUnaryReactor* GetItem(grpc::CallbackServerContext* ctx, const pb::GetItemRequest* req,
                                    pb::GetItemResponse* resp) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* GetItemStream(grpc::CallbackServerContext* ctx,
                                                            const grpc::ByteBuffer* req) override;
  grpc::ServerUnaryReactor* SetItem(grpc::CallbackServerContext* ctx, const pb::SetItemRequest* req,
                                    pb::SetItemResponse* resp) override;
  grpc::ServerReadReactor<pb::SetItemRequest>* SetItemStream(grpc::CallbackServerContext* ctx,
                                                             pb::SetItemResponse* resp) override;
  grpc::ServerUnaryReactor* ReleaseLease(grpc::CallbackServerContext* ctx,
                                         const pb::ReleaseLeaseRequest* req,
                                         pb::ReleaseLeaseResponse* resp) override;
  grpc::ServerUnaryReactor* RegisterDeviceRegion(grpc::CallbackServerContext* ctx,
                                                 const pb::RegisterDeviceRegionRequest* req,
                                                 pb::RegisterDeviceRegionResponse* resp) override;
  grpc::ServerUnaryReactor* UnregisterDeviceRegion(
      grpc::CallbackServerContext* ctx, const pb::UnregisterDeviceRegionRequest* req,
      pb::UnregisterDeviceRegionResponse* resp) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* StreamBytes(grpc::CallbackServerContext* ctx,
                                                          const grpc::ByteBuffer* req) override;
  grpc::ServerUnaryReactor* RegisterHostRegion(grpc::CallbackServerContext* ctx,
                                               const pb::RegisterHostRegionRequest* req,
                                               pb::RegisterHostRegionResponse* resp) override;
  grpc::ServerUnaryReactor* UnregisterHostRegion(grpc::CallbackServerContext* ctx,
                                                 const pb::UnregisterHostRegionRequest* req,
                                                 pb::UnregisterHostRegionResponse* resp) override;

  // Shared by the handlers (public for the stream reactors in service_stream.cc).
  Result<std::shared_ptr<Array>> OpenArray(const std::string& store, const std::string& path);
  Result<NamedStore*> FindStore(const std::string& name, bool for_write);
  // A write's selection of `array` (at `path`), resolved; RESOURCE_EXHAUSTED when its input
  // would exceed max_request_bytes.
  Result<ResolvedSelection> ResolveInput(const Array& array, const std::string& path,
                                         const Selection& selection) const;
  // An advanced selection (orthogonal, points, mask) of `array`, resolved; RESOURCE_EXHAUSTED
  // when the result (`for_input`: the input) would exceed max_result_bytes (max_request_bytes).
  Result<ResolvedAdvanced> ResolveAdvanced(const Array& array, const std::string& path,
                                           const pb::Selection& selection, bool for_input) const;
  // GetItem of an advanced selection: HOST results, as bytes or into a host region.
  Status GetAdvanced(const Array& array, const pb::GetItemRequest& req, PrototypeKind prototype,
                     const IoOptions& io, pb::GetItemResponse* resp);
  // SetItem of an advanced selection from the request's bytes or host region.
  Status SetAdvanced(Array& array, const pb::SetItemRequest& req, const IoOptions& io,
                     pb::SetItemResponse* resp);
  // The request's prototype, else the array's override, else HOST for arrays of rank 0 or 1
  // (coordinates), else the server's default.
  Result<PrototypeKind> ResolvePrototype(const pb::GetItemRequest& req, size_t rank) const;
  const ServerConfig& config() const { return config_; }
  ThreadPool& executor() { return executor_; }
  ThreadPool& stream_decoder() { return stream_decoder_; }
  ByteBudget& stream_budget() { return stream_budget_; }
  BufferCache& band_buffers() { return band_buffers_; }
  // StreamBytes' distinct source: at least `nbytes`, filled; dropped on an idle tick.
  // StreamBytes' distinct source of at least `nbytes`; nullptr when `stop` said so while it was
  // built (checked every 64 MiB).
  std::shared_ptr<uint8_t[]> StreamBytesSource(uint64_t nbytes, const std::function<bool()>& stop);
  bool draining() const { return draining_; }
  void BeginRequest() { ++in_flight_; }
  void EndRequest() {
    ++completed_;
    --in_flight_;
  }
  HostRegionRegistry& host_regions() { return host_regions_; }
  Metrics& metrics() { return *metrics_; }

 private:
  // Where a unary request's work runs. Handing work to the executor costs a thread wake-up and
  // a reply written from a foreign thread (an empty call 100 -> 63 us on 2 cores, 71-119 ->
  // 54-56 us on the H200), so short work runs on gRPC's callback thread, at most
  // `inline_requests` at a time; long work must not hold gRPC's few callback threads.
  enum class Dispatch { kShort, kExecutor };
  // Short: decoding at most this much, or copying at most this much from GPU memory to GPU
  // memory (a store in GPU memory read to a DEVICE result).
  static constexpr uint64_t kShortDecodeBytes = 4 << 20;
  static constexpr uint64_t kShortDeviceCopyBytes = uint64_t{4} << 30;
  template <typename Work>
  grpc::ServerUnaryReactor* RunUnary(const char* method, const std::string& what, Dispatch dispatch,
                                     Work work);
  Dispatch GetItemDispatch(const pb::GetItemRequest& req);
  // The array if it is open already (no store access), else nullptr.
  std::shared_ptr<Array> OpenedArray(const std::string& store, const std::string& path);
  void Forget(const std::string& store, const std::string& path_prefix);
  Status CheckChunkLimit(const ArrayMetadata& m, const std::string& where) const;
  // Runs once on the reaper thread at start: stores are served meanwhile.
  void RemoveStaleTemporaries();
  // Gives freed heap back to the system once the server has been idle a reaper tick.
  void TrimWhenIdle();

  ServerConfig config_;
  std::map<std::string, NamedStore> stores_;
  uint64_t epoch_;
  ThreadPool executor_;
  std::atomic<size_t> inline_running_{0};
  ThreadPool stream_decoder_;
  ByteBudget stream_budget_;
  BufferCache band_buffers_;
  std::mutex stream_source_mutex_;
  std::shared_ptr<uint8_t[]> stream_source_;
  uint64_t stream_source_bytes_ = 0;
  HostRegionRegistry host_regions_;
  std::unique_ptr<DeviceBackend> devices_;
  std::atomic<bool> draining_{false};
  std::atomic<size_t> in_flight_{0};
  std::atomic<uint64_t> completed_{0};
  uint64_t completed_at_last_tick_ = 0, completed_at_trim_ = 0;  // reaper thread only
  std::thread reaper_;  // drops regions and leases of clients that died, and expired leases
  std::mutex reaper_mutex_;
  std::condition_variable reaper_cv_;
  bool stopping_ = false;
  std::mutex arrays_mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Array>> arrays_;
  std::unique_ptr<Metrics> metrics_;  // last: its scrape thread reads the members above
};

// Converts a wire selection to the engine's.
// RESOURCE_EXHAUSTED (reason UNARY_RESULT_TOO_LARGE) for a unary result past the limit.
Status UnaryResultTooLarge(uint64_t nbytes, uint64_t limit);
void Describe(const ArrayMetadata& m, const ResolvedSelection& sel, pb::ArrayDescriptor* out);
void Describe(const ArrayMetadata& m, const ResolvedAdvanced& sel, pb::ArrayDescriptor* out);

}  // namespace zarrd::server
