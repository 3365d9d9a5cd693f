#include "server/service.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "common/checked.h"
#include "common/version.h"
#include "server/service_unary.h"

namespace zarrd::server {

using internal::NodeName;
using internal::RetryStale;

Status UnaryResultTooLarge(uint64_t nbytes, uint64_t limit) {
  return ResourceExhausted("result of " + std::to_string(nbytes) +
                           " bytes exceeds the unary limit of " + std::to_string(limit) +
                           ": use GetItemStream or a host region")
      .WithReason(reason::kUnaryResultTooLarge);
}

void Describe(const ArrayMetadata& m, const ResolvedSelection& sel, pb::ArrayDescriptor* out) {
  out->set_data_type(std::string(V3Name(m.dtype)));
  out->set_numpy_dtype(m.result_typestr());
  for (int64_t s : sel.result_shape) out->add_shape(s);
  out->set_nbytes(sel.num_bytes(ItemSize(m.dtype)));
}

ZarrdService::ZarrdService(ServerConfig config, std::map<std::string, NamedStore> stores,
                           uint64_t epoch, std::unique_ptr<DeviceBackend> devices,
                           std::unique_ptr<Metrics> metrics)
    : config_(std::move(config)),
      stores_(std::move(stores)),
      epoch_(epoch),
      executor_(config_.worker_threads ? config_.worker_threads
                                       : std::max(2u, std::thread::hardware_concurrency())),
      stream_decoder_(config_.stream_decode_threads
                          ? config_.stream_decode_threads
                          : std::max(1u, std::thread::hardware_concurrency() / 2)),
      stream_budget_(config_.stream_buffer_bytes),
      band_buffers_(config_.stream_buffer_bytes),
      devices_(std::move(devices)),
      metrics_(std::move(metrics)) {
  metrics_->SetRefresh([this] {
    pb::ServerInfoResponse info;
    devices_->Describe(&info);
    metrics_->Update(info, host_regions_.count(), in_flight_);
  });
  reaper_ = std::thread([this] {
    RemoveStaleTemporaries();
    std::unique_lock lock(reaper_mutex_);
    while (
        !reaper_cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; })) {
      host_regions_.ReapOrphans();
      devices_->Reap();
      TrimWhenIdle();
    }
  });
}

void ZarrdService::RemoveStaleTemporaries() {
  for (auto& [name, s] : stores_) {
    if (s.config.read_only) continue;
    auto removed = s.store->RemoveStaleTemporaries();
    if (!removed.ok()) {
      spdlog::warn("store {}: {}", name, removed.status().ToString());
    } else if (*removed > 0) {
      spdlog::info("store {}: removed {} temporary files of unfinished writes", name, *removed);
    }
  }
}

void ZarrdService::TrimWhenIdle() {
  const uint64_t completed = completed_.load();
  const bool quiet_tick = completed == completed_at_last_tick_ && in_flight_ == 0;
  completed_at_last_tick_ = completed;
  if (!quiet_tick || completed == completed_at_trim_) return;
  completed_at_trim_ = completed;
  band_buffers_.Clear();
  {
    std::lock_guard lock(stream_source_mutex_);
    stream_source_.reset();
    stream_source_bytes_ = 0;
  }
  ::malloc_trim(0);
}

std::shared_ptr<uint8_t[]> ZarrdService::StreamBytesSource(uint64_t nbytes,
                                                           const std::function<bool()>& stop) {
  std::lock_guard lock(stream_source_mutex_);
  if (stream_source_bytes_ < nbytes) {
    stream_source_.reset();
    stream_source_bytes_ = 0;
    std::shared_ptr<uint8_t[]> source(new uint8_t[nbytes]);
    for (uint64_t i = 0; i < nbytes; i += 4096) {  // every page touched, no two alike
      if (i % (64u << 20) == 0 && stop()) return nullptr;
      std::memset(source.get() + i, static_cast<int>(i >> 12),
                  std::min<uint64_t>(4096, nbytes - i));
    }
    stream_source_ = std::move(source);
    stream_source_bytes_ = nbytes;
  }
  return stream_source_;
}

Status ZarrdService::CheckChunkLimit(const ArrayMetadata& m, const std::string& where) const {
  const size_t bytes = m.chunk_spec().num_bytes();
  if (bytes <= config_.max_chunk_bytes) return OkStatus();
  return InvalidArgument(where + ": one chunk holds " + std::to_string(bytes) +
                         " bytes decoded, over the server's max_chunk_bytes (" +
                         std::to_string(config_.max_chunk_bytes) + ")");
}

ZarrdService::~ZarrdService() {
  {
    std::lock_guard lock(reaper_mutex_);
    stopping_ = true;
  }
  reaper_cv_.notify_all();
  reaper_.join();
}

ZarrdService::Dispatch ZarrdService::GetItemDispatch(const pb::GetItemRequest& req) {
  if (req.selection().ByteSizeLong() > (64 << 10)) return Dispatch::kExecutor;  // long index lists
  std::shared_ptr<Array> array = OpenedArray(req.store(), req.path());
  if (!array) return Dispatch::kExecutor;  // opening it reads the store
  if (IsAdvanced(req.selection())) return Dispatch::kExecutor;
  auto m = array->metadata();
  auto basic = BasicFromWire(req.selection(), m->shape, m->chunk_shape);
  if (!basic.ok()) return Dispatch::kShort;  // fails at once
  auto sel = ResolveSelection(*basic, m->shape);
  if (!sel.ok()) return Dispatch::kShort;
  const auto prototype = ResolvePrototype(req, m->rank());
  if (prototype.ok() && *prototype == PrototypeKind::kDevice && array->store().device_resident()) {
    const uint64_t nbytes = sel->num_bytes(ItemSize(m->dtype));
    return nbytes <= kShortDeviceCopyBytes ? Dispatch::kShort : Dispatch::kExecutor;
  }
  // Chunks the read decodes in full, not the result's size: a column of a large array is small
  // but touches every chunk row.
  const ChunkSelection chunks(*sel, m->chunk_shape, ItemSize(m->dtype));
  const uint64_t decoded = SaturatingMul(chunks.num_chunks(), m->chunk_spec().num_bytes());
  return decoded <= kShortDecodeBytes ? Dispatch::kShort : Dispatch::kExecutor;
}

Result<NamedStore*> ZarrdService::FindStore(const std::string& name, bool for_write) {
  auto it = stores_.find(name);
  if (it == stores_.end()) return NotFound("store \"" + name + "\" is not configured");
  if (for_write && it->second.config.read_only) {
    return PermissionDenied("store \"" + name + "\" is read-only");
  }
  return &it->second;
}

Result<ResolvedSelection> ZarrdService::ResolveInput(const Array& array, const std::string& path,
                                                     const Selection& selection) const {
  auto resolved = ResolveSelection(selection, array.metadata()->shape);
  if (!resolved.ok()) return resolved.status().WithContext("array '" + path + "'");
  const uint64_t nbytes = resolved->num_bytes(ItemSize(array.metadata()->dtype));
  if (nbytes > config_.max_request_bytes) {
    return ResourceExhausted("array '" + path + "': input of " + std::to_string(nbytes) +
                             " bytes exceeds max_request_bytes " +
                             std::to_string(config_.max_request_bytes));
  }
  return resolved;
}

std::shared_ptr<Array> ZarrdService::OpenedArray(const std::string& store,
                                                 const std::string& path) {
  std::lock_guard lock(arrays_mutex_);
  auto it = arrays_.find({store, path});
  return it == arrays_.end() ? nullptr : it->second;
}

Result<std::shared_ptr<Array>> ZarrdService::OpenArray(const std::string& store,
                                                       const std::string& path) {
  if (auto array = OpenedArray(store, path); array && !array->stale()) return array;
  ZARRD_ASSIGN_OR_RETURN(NamedStore * s, FindStore(store, false));
  ZARRD_ASSIGN_OR_RETURN(auto array, Array::Open(s->store, path));
  ZARRD_RETURN_IF_ERROR(CheckChunkLimit(*array->metadata(), "array \"" + path + "\""));
  std::lock_guard lock(arrays_mutex_);
  return arrays_[{store, path}] = array;
}

void ZarrdService::Forget(const std::string& store, const std::string& prefix) {
  std::lock_guard lock(arrays_mutex_);
  for (auto it = arrays_.begin(); it != arrays_.end();) {
    const auto& [s, p] = it->first;
    bool below = prefix.empty() || p == prefix || p.rfind(prefix + "/", 0) == 0;
    it = s == store && below ? arrays_.erase(it) : std::next(it);
  }
}

Result<PrototypeKind> ZarrdService::ResolvePrototype(const pb::GetItemRequest& req,
                                                     size_t rank) const {
  if (req.prototype() == pb::PROTOTYPE_HOST) {
    if (req.has_device_region()) return InvalidArgument("device_region needs prototype DEVICE");
    return PrototypeKind::kHost;
  }
  if (req.prototype() == pb::PROTOTYPE_DEVICE || req.has_device_region()) {
    if (req.has_host_region()) return InvalidArgument("host_region needs prototype HOST");
    return PrototypeKind::kDevice;
  }
  for (const auto& o : config_.overrides) {
    if (o.store == req.store() && o.path == req.path()) return o.prototype;
  }
  if (rank <= 1 || req.has_host_region()) return PrototypeKind::kHost;
  return config_.default_prototype;
}

grpc::ServerUnaryReactor* ZarrdService::ServerInfo(grpc::CallbackServerContext*,
                                                   const pb::ServerInfoRequest*,
                                                   pb::ServerInfoResponse* resp) {
  return RunUnary("ServerInfo", "", Dispatch::kShort, [this, resp](const std::atomic<bool>&) {
    resp->set_version(kZarrdVersion);
    resp->set_epoch(epoch_);
    for (const auto& [name, s] : stores_) {
      auto* info = resp->add_stores();
      info->set_name(name);
      info->set_kind(s.config.kind);
      info->set_root(s.config.root);
      info->set_read_only(s.config.read_only);
    }
    resp->set_max_unary_result_bytes(config_.max_unary_result_bytes);
    resp->set_max_request_bytes(config_.max_request_bytes);
    resp->set_stream_piece_bytes(config_.stream_piece_bytes);
    resp->set_default_prototype(config_.default_prototype == PrototypeKind::kDevice
                                    ? pb::PROTOTYPE_DEVICE
                                    : pb::PROTOTYPE_HOST);
    devices_->Describe(resp);
    return OkStatus();
  });
}

grpc::ServerUnaryReactor* ZarrdService::GetItem(grpc::CallbackServerContext*,
                                                const pb::GetItemRequest* req,
                                                pb::GetItemResponse* resp) {
  return RunUnary(
      "GetItem", NodeName(req->store(), req->path()), GetItemDispatch(*req),
      RetryStale([this, req, resp](const std::atomic<bool>& cancelled) -> Status {
        resp->Clear();
        ZARRD_ASSIGN_OR_RETURN(auto array, OpenArray(req->store(), req->path()));
        auto m = array->metadata();
        ZARRD_ASSIGN_OR_RETURN(PrototypeKind prototype, ResolvePrototype(*req, m->rank()));
        IoOptions io{.pool = nullptr, .cancelled = &cancelled};
        if (IsAdvanced(req->selection())) return GetAdvanced(*array, *req, prototype, io, resp);
        auto basic = BasicFromWire(req->selection(), m->shape, m->chunk_shape);
        if (!basic.ok()) return basic.status().WithContext("array '" + req->path() + "'");
        auto sel = ResolveSelection(*basic, m->shape);
        if (!sel.ok()) return sel.status().WithContext("array '" + req->path() + "'");
        Describe(*m, *sel, resp->mutable_array());
        const uint64_t nbytes = resp->array().nbytes();
        if (nbytes > config_.max_result_bytes) {
          return ResourceExhausted("result of " + std::to_string(nbytes) +
                                   " bytes exceeds max_result_bytes " +
                                   std::to_string(config_.max_result_bytes));
        }
        if (prototype == PrototypeKind::kDevice) {
          resp->mutable_array()->set_prototype(pb::PROTOTYPE_DEVICE);
          ZARRD_RETURN_IF_ERROR(devices_->Read(*array, *sel, *req, io, resp));
          metrics_->BytesRead("device", nbytes);
          return OkStatus();
        }
        resp->mutable_array()->set_prototype(pb::PROTOTYPE_HOST);
        if (req->has_host_region()) {
          ZARRD_ASSIGN_OR_RETURN(auto region, host_regions_.Find(req->host_region().region_id()));
          if (req->host_region().nbytes() != nbytes) {
            return InvalidArgument("host_region.nbytes is " +
                                   std::to_string(req->host_region().nbytes()) +
                                   ", the result has " + std::to_string(nbytes));
          }
          ZARRD_ASSIGN_OR_RETURN(auto view, region->Slice(req->host_region().offset(), nbytes));
          ZARRD_RETURN_IF_ERROR(host_regions_.CheckIntact(*region, true));
          io.result_shared = true;
          ZARRD_RETURN_IF_ERROR(array->ReadResolved(*sel, view.data(), view.size(), io));
          ZARRD_RETURN_IF_ERROR(host_regions_.CheckIntact(*region, false));
          metrics_->BytesRead("host", nbytes);
          return OkStatus();
        }
        if (nbytes > config_.max_unary_result_bytes) {
          return UnaryResultTooLarge(nbytes, config_.max_unary_result_bytes);
        }
        std::string* data = resp->mutable_data();
        data->resize(nbytes);
        ZARRD_RETURN_IF_ERROR(array->ReadResolved(*sel, data->data(), data->size(), io));
        metrics_->BytesRead("host", nbytes);
        return OkStatus();
      }));
}

grpc::ServerUnaryReactor* ZarrdService::SetItem(grpc::CallbackServerContext*,
                                                const pb::SetItemRequest* req,
                                                pb::SetItemResponse* resp) {
  return RunUnary(
      "SetItem", NodeName(req->store(), req->path()), Dispatch::kExecutor,
      RetryStale([this, req, resp](const std::atomic<bool>& cancelled) -> Status {
        resp->Clear();
        ZARRD_RETURN_IF_ERROR(FindStore(req->store(), true));
        ZARRD_ASSIGN_OR_RETURN(auto array, OpenArray(req->store(), req->path()));
        IoOptions io{.pool = nullptr, .cancelled = &cancelled};
        if (IsAdvanced(req->selection())) return SetAdvanced(*array, *req, io, resp);
        auto basic = BasicFromWire(req->selection(), array->metadata()->shape,
                                   array->metadata()->chunk_shape);
        if (!basic.ok()) return basic.status().WithContext("array '" + req->path() + "'");
        ZARRD_ASSIGN_OR_RETURN(auto sel, ResolveInput(*array, req->path(), *basic));
        if (req->lease_id() != 0 || req->has_device_region()) {
          ZARRD_ASSIGN_OR_RETURN(uint64_t written, devices_->Write(*array, sel, *req, io));
          resp->set_nbytes_written(written);
          metrics_->BytesWritten("device", written);
          return OkStatus();
        }
        if (req->has_host_region()) {
          ZARRD_ASSIGN_OR_RETURN(auto region, host_regions_.Find(req->host_region().region_id()));
          ZARRD_ASSIGN_OR_RETURN(
              auto view, region->Slice(req->host_region().offset(), req->host_region().nbytes()));
          ZARRD_RETURN_IF_ERROR(host_regions_.CheckIntact(*region, true));
          HostSource source(view.data(), view.size(), ItemSize(array->metadata()->dtype));
          // Pages lost during the write read as zeros: the write still fails, unacknowledged.
          ZARRD_RETURN_IF_ERROR(array->WriteFromSource(sel, source, io));
          ZARRD_RETURN_IF_ERROR(host_regions_.CheckIntact(*region, false));
          resp->set_nbytes_written(view.size());
          metrics_->BytesWritten("host_region", view.size());
          return OkStatus();
        }
        if (req->offset() != 0) return InvalidArgument("offset: only SetItemStream takes pieces");
        HostSource source(reinterpret_cast<const uint8_t*>(req->data().data()), req->data().size(),
                          ItemSize(array->metadata()->dtype));
        ZARRD_RETURN_IF_ERROR(array->WriteFromSource(sel, source, io));
        resp->set_nbytes_written(req->data().size());
        metrics_->BytesWritten("bytes", req->data().size());
        return OkStatus();
      }));
}

grpc::ServerUnaryReactor* ZarrdService::RegisterHostRegion(grpc::CallbackServerContext*,
                                                           const pb::RegisterHostRegionRequest* req,
                                                           pb::RegisterHostRegionResponse* resp) {
  return RunUnary("RegisterHostRegion", std::to_string(req->nbytes()), Dispatch::kExecutor,
                  [this, req, resp](const std::atomic<bool>&) -> Status {
                    if (!req->shm_name().empty()) {
                      return PermissionDenied("shm_name \"" + req->shm_name() +
                                              "\": zarrd maps only shared memory it creates; leave "
                                              "shm_name empty and map the answer's shm_name");
                    }
                    ZARRD_ASSIGN_OR_RETURN(auto region,
                                           host_regions_.Create(req->nbytes(), req->client_pid()));
                    resp->set_region_id(region->id());
                    resp->set_nbytes(region->size());
                    resp->set_shm_name(region->shm_name());
                    return OkStatus();
                  });
}

grpc::ServerUnaryReactor* ZarrdService::UnregisterHostRegion(
    grpc::CallbackServerContext*, const pb::UnregisterHostRegionRequest* req,
    pb::UnregisterHostRegionResponse*) {
  return RunUnary(
      "UnregisterHostRegion", req->region_id(), Dispatch::kShort,
      [this, req](const std::atomic<bool>&) { return host_regions_.Unregister(req->region_id()); });
}

grpc::ServerUnaryReactor* ZarrdService::ReleaseLease(grpc::CallbackServerContext*,
                                                     const pb::ReleaseLeaseRequest* req,
                                                     pb::ReleaseLeaseResponse*) {
  return RunUnary(
      "ReleaseLease", std::to_string(req->lease_id()), Dispatch::kShort,
      [this, req](const std::atomic<bool>&) { return devices_->ReleaseLease(req->lease_id()); });
}

grpc::ServerUnaryReactor* ZarrdService::RegisterDeviceRegion(
    grpc::CallbackServerContext*, const pb::RegisterDeviceRegionRequest* req,
    pb::RegisterDeviceRegionResponse* resp) {
  return RunUnary("RegisterDeviceRegion", req->gpu_uuid(), Dispatch::kExecutor,
                  [this, req, resp](const std::atomic<bool>&) -> Status {
                    ZARRD_ASSIGN_OR_RETURN(std::string id, devices_->RegisterRegion(*req));
                    resp->set_region_id(id);
                    return OkStatus();
                  });
}

grpc::ServerUnaryReactor* ZarrdService::UnregisterDeviceRegion(
    grpc::CallbackServerContext*, const pb::UnregisterDeviceRegionRequest* req,
    pb::UnregisterDeviceRegionResponse*) {
  return RunUnary("UnregisterDeviceRegion", req->region_id(), Dispatch::kExecutor,
                  [this, req](const std::atomic<bool>&) {
                    return devices_->UnregisterRegion(req->region_id());
                  });
}

}  // namespace zarrd::server
