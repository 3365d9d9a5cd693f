// The Zarrd gRPC service over the engine, on gRPC's callback API. Blocking engine work runs on
// the service's executor, never on gRPC's own threads.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "server/housekeeping.h"
#include "server/prepared_request.h"
#include "server/service_state.h"
#include "zarrd/v1/zarrd.grpc.pb.h"

namespace zarrd::server {

namespace pb = ::zarrd::v1;

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
  void StartDraining() { state_.requests.StartDraining(); }
  size_t in_flight() const { return state_.requests.in_flight(); }

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
  // Runs `work` (a Status(const std::atomic<bool>& cancelled)) in a RequestScope; `store` and
  // `what` name what the request is about for its log line and metrics.
  template <typename Work>
  grpc::ServerUnaryReactor* RunUnary(const char* method, std::string store, std::string what,
                                     Dispatch dispatch, Work work);
  // Where a GetItem runs; when the array is open already, the read it prepared to decide, for
  // PreparedGetItem.
  Dispatch GetItemDispatch(const pb::GetItemRequest& req, std::shared_ptr<PreparedRead>* prepared);
  // The read of `req` from `array` (as ArrayCache::Open gives it now): the one the dispatch
  // prepared, taken, when it was prepared from this array and metadata, else a new one.
  Result<PreparedRead> PreparedGetItem(const pb::GetItemRequest& req, std::shared_ptr<Array> array,
                                       std::shared_ptr<PreparedRead>* prepared);

  ServiceState state_;
  std::atomic<size_t> inline_running_{0};
  Housekeeping housekeeping_;  // after state_, which its thread uses
};

// RESOURCE_EXHAUSTED (reason UNARY_RESULT_TOO_LARGE) for a unary result past the limit.
Status UnaryResultTooLarge(uint64_t nbytes, uint64_t limit);

}  // namespace zarrd::server
