#include "server/service.h"

#include <algorithm>
#include <thread>

#include "common/kvstore/device_resident_store.h"
#include "common/util/checked.h"
#include "common/util/version.h"
#include "proto/selection_wire.h"
#include "server/device_wire.h"
#include "server/prepared_request.h"
#include "server/service_unary.h"

namespace zarrd::server {

using internal::RetryStale;

Status UnaryResultTooLarge(uint64_t nbytes, uint64_t limit) {
  return ResourceExhausted("result of " + std::to_string(nbytes) +
                           " bytes exceeds the unary limit of " + std::to_string(limit) +
                           ": use GetItemStream or a host region")
      .WithReason(reason::kUnaryResultTooLarge);
}

ServiceState::ServiceState(ServerConfig config_in, std::map<std::string, NamedStore> stores,
                           uint64_t epoch_in, std::unique_ptr<DeviceBackend> devices_in,
                           std::unique_ptr<Metrics> metrics_in)
    : config(std::move(config_in)),
      epoch(epoch_in),
      arrays(std::move(stores), config.max_chunk_bytes),
      executor(config.worker_threads ? config.worker_threads
                                     : std::max(2u, std::thread::hardware_concurrency())),
      stream_decoder(config.stream_decode_threads
                         ? config.stream_decode_threads
                         : std::max(1u, std::thread::hardware_concurrency() / 2)),
      stream_budget(config.stream_buffer_bytes),
      band_buffers(config.stream_buffer_bytes),
      devices(std::move(devices_in)),
      metrics(std::move(metrics_in)) {}

ZarrdService::ZarrdService(ServerConfig config, std::map<std::string, NamedStore> stores,
                           uint64_t epoch, std::unique_ptr<DeviceBackend> devices,
                           std::unique_ptr<Metrics> metrics)
    : state_(std::move(config), std::move(stores), epoch, std::move(devices), std::move(metrics)),
      housekeeping_(state_) {
  state_.metrics->SetRefresh([this] {
    state_.metrics->Update(state_.devices->Describe(), state_.host_regions.count(),
                           state_.requests.in_flight());
  });
}

ZarrdService::~ZarrdService() = default;

ZarrdService::Dispatch ZarrdService::GetItemDispatch(const pb::GetItemRequest& req,
                                                     std::shared_ptr<PreparedRead>* prepared) {
  if (req.selection().ByteSizeLong() > (64 << 10)) return Dispatch::kExecutor;  // long index lists
  if (IsAdvanced(req.selection())) return Dispatch::kExecutor;
  std::shared_ptr<Array> array = state_.arrays.Opened(req.store(), req.path());
  if (!array) return Dispatch::kExecutor;  // opening it reads the store
  auto read = PrepareRead(state_.config, req, std::move(array));
  if (!read.ok()) return Dispatch::kShort;  // fails at once
  *prepared = std::make_shared<PreparedRead>(*std::move(read));
  const PreparedRead& r = **prepared;
  if (r.prototype == PrototypeKind::kDevice && AsDeviceResident(*r.array->store())) {
    return r.nbytes() <= kShortDeviceCopyBytes ? Dispatch::kShort : Dispatch::kExecutor;
  }
  // Chunks the read decodes in full, not the result's size: a column of a large array is small
  // but touches every chunk row.
  const ArrayMetadata& m = *r.metadata;
  const ChunkSelection chunks(r.selection, m.chunk_shape, ItemSize(m.dtype));
  const uint64_t decoded = SaturatingMul(chunks.num_chunks(), m.chunk_spec().num_bytes());
  return decoded <= kShortDecodeBytes ? Dispatch::kShort : Dispatch::kExecutor;
}

grpc::ServerUnaryReactor* ZarrdService::ServerInfo(grpc::CallbackServerContext*,
                                                   const pb::ServerInfoRequest*,
                                                   pb::ServerInfoResponse* resp) {
  return RunUnary("ServerInfo", "", "", Dispatch::kShort, [this, resp](const std::atomic<bool>&) {
    const ServerConfig& config = state_.config;
    resp->set_version(kZarrdVersion);
    resp->set_epoch(state_.epoch);
    for (const auto& [name, s] : state_.arrays.stores()) {
      auto* info = resp->add_stores();
      info->set_name(name);
      info->set_kind(s.config.kind);
      info->set_root(s.config.root);
      info->set_read_only(s.config.read_only);
    }
    resp->set_max_unary_result_bytes(config.max_unary_result_bytes);
    resp->set_max_request_bytes(config.max_request_bytes);
    resp->set_stream_piece_bytes(config.stream_piece_bytes);
    resp->set_default_prototype(config.default_prototype == PrototypeKind::kDevice
                                    ? pb::PROTOTYPE_DEVICE
                                    : pb::PROTOTYPE_HOST);
    DeviceInventoryToWire(state_.devices->Describe(), resp);
    return OkStatus();
  });
}

Result<PreparedRead> ZarrdService::PreparedGetItem(const pb::GetItemRequest& req,
                                                   std::shared_ptr<Array> array,
                                                   std::shared_ptr<PreparedRead>* prepared) {
  std::shared_ptr<PreparedRead> early = std::move(*prepared);
  if (early && early->array == array && early->metadata == array->metadata()) {
    return std::move(*early);
  }
  return PrepareRead(state_.config, req, std::move(array));
}

grpc::ServerUnaryReactor* ZarrdService::GetItem(grpc::CallbackServerContext*,
                                                const pb::GetItemRequest* req,
                                                pb::GetItemResponse* resp) {
  std::shared_ptr<PreparedRead> prepared;
  const Dispatch dispatch = GetItemDispatch(*req, &prepared);
  return RunUnary(
      "GetItem", req->store(), req->path(), dispatch,
      RetryStale([this, req, resp, prepared](const std::atomic<bool>& cancelled) mutable -> Status {
        resp->Clear();
        ZARRD_ASSIGN_OR_RETURN(auto array, state_.arrays.Open(req->store(), req->path()));
        ZARRD_ASSIGN_OR_RETURN(PreparedRead read,
                               PreparedGetItem(*req, std::move(array), &prepared));
        IoOptions io{.pool = nullptr, .cancelled = &cancelled};
        if (read.strings()) {
          if (req->has_host_region()) {
            return InvalidArgument("array '" + req->path() + "' holds strings (" +
                                   read.metadata->result_typestr() +
                                   "): their results come as bytes or a stream, not in a host "
                                   "region");
          }
          const uint64_t limit =
              std::min(state_.config.max_unary_result_bytes, state_.config.max_result_bytes);
          ZARRD_ASSIGN_OR_RETURN(
              *resp->mutable_data(), read.ReadStrings(io, limit, [&](uint64_t nbytes) {
                return nbytes > state_.config.max_result_bytes
                           ? CheckLimit(req->path(), "result", nbytes,
                                        state_.config.max_result_bytes, "max_result_bytes")
                           : UnaryResultTooLarge(nbytes, state_.config.max_unary_result_bytes);
              }));
          *resp->mutable_array() = read.descriptor;
          state_.metrics->BytesRead("host", read.nbytes());
          return OkStatus();
        }
        *resp->mutable_array() = read.descriptor;
        const uint64_t nbytes = read.nbytes();
        if (read.prototype == PrototypeKind::kDevice) {
          DeviceReadTarget target = DeviceReadTargetFromWire(*req);
          target.gpu_decode = read.gpu_decode;
          auto deliver = [&]() -> Result<DeviceResult> {
            if (!read.advanced) {
              return state_.devices->Read(*read.array, read.selection, nbytes, target, io);
            }
            // Gathered on the host (each chunk decoded once), then one upload.
            return state_.devices->Upload(nbytes, target, [&](MutableByteView values) {
              return read.ReadInto(values.data(), values.size(), io);
            });
          };
          ZARRD_ASSIGN_OR_RETURN(DeviceResult result, deliver());
          DeviceResultToWire(result, state_.epoch, resp->mutable_device_buffer());
          state_.metrics->BytesRead("device", nbytes);
          return OkStatus();
        }
        // Reads the GPU decodes under the policy go there and come back
        // (DeviceBackend::ReadToHost).
        auto read_host = [&](MutableByteView view) -> Status {
          if (!read.advanced) {
            ZARRD_ASSIGN_OR_RETURN(
                bool on_gpu,
                state_.devices->ReadToHost(*read.array, read.selection, view, read.gpu_decode, io));
            if (on_gpu) return OkStatus();
          }
          return read.ReadInto(view.data(), view.size(), io);
        };
        if (req->has_host_region()) {
          const auto& target = req->host_region();
          if (target.nbytes() != nbytes) {
            return InvalidArgument("host_region.nbytes is " + std::to_string(target.nbytes()) +
                                   ", the result has " + std::to_string(nbytes));
          }
          io.result_shared = true;
          ZARRD_RETURN_IF_ERROR(
              state_.host_regions.Use(target.region_id(), target.offset(), nbytes, read_host));
          state_.metrics->BytesRead("host", nbytes);
          return OkStatus();
        }
        if (nbytes > state_.config.max_unary_result_bytes) {
          return UnaryResultTooLarge(nbytes, state_.config.max_unary_result_bytes);
        }
        std::string* data = resp->mutable_data();
        data->resize(nbytes);
        ZARRD_RETURN_IF_ERROR(read_host({reinterpret_cast<uint8_t*>(data->data()), data->size()}));
        state_.metrics->BytesRead("host", nbytes);
        return OkStatus();
      }));
}

grpc::ServerUnaryReactor* ZarrdService::SetItem(grpc::CallbackServerContext*,
                                                const pb::SetItemRequest* req,
                                                pb::SetItemResponse* resp) {
  return RunUnary(
      "SetItem", req->store(), req->path(), Dispatch::kExecutor,
      RetryStale([this, req, resp](const std::atomic<bool>& cancelled) -> Status {
        resp->Clear();
        ZARRD_RETURN_IF_ERROR(state_.arrays.FindStore(req->store(), true));
        ZARRD_ASSIGN_OR_RETURN(auto array, state_.arrays.Open(req->store(), req->path()));
        ZARRD_ASSIGN_OR_RETURN(PreparedWrite write, PrepareWrite(state_.config, req->selection(),
                                                                 req->path(), std::move(array)));
        IoOptions io{.pool = nullptr, .cancelled = &cancelled};
        if (req->lease_id() != 0 || req->has_device_region()) {
          if (write.advanced) {
            return InvalidArgument(
                "array '" + req->path() +
                "': orthogonal and point selections are written from HOST input");
          }
          ZARRD_ASSIGN_OR_RETURN(uint64_t written,
                                 state_.devices->Write(*write.array, write.selection,
                                                       DeviceWriteSourceFromWire(*req), io));
          resp->set_nbytes_written(written);
          state_.metrics->BytesWritten("device", written);
          return OkStatus();
        }
        if (req->has_host_region()) {
          const auto& source = req->host_region();
          // Pages lost during the write read as zeros: the write still fails, unacknowledged.
          ZARRD_RETURN_IF_ERROR(state_.host_regions.Use(
              source.region_id(), source.offset(), source.nbytes(),
              [&](MutableByteView view) { return write.WriteFrom(view.data(), view.size(), io); }));
          resp->set_nbytes_written(source.nbytes());
          state_.metrics->BytesWritten("host_region", source.nbytes());
          return OkStatus();
        }
        if (req->offset() != 0) return InvalidArgument("offset: only SetItemStream takes pieces");
        ZARRD_RETURN_IF_ERROR(write.WriteFrom(req->data().data(), req->data().size(), io));
        resp->set_nbytes_written(req->data().size());
        state_.metrics->BytesWritten("bytes", req->data().size());
        return OkStatus();
      }));
}

grpc::ServerUnaryReactor* ZarrdService::RegisterHostRegion(grpc::CallbackServerContext*,
                                                           const pb::RegisterHostRegionRequest* req,
                                                           pb::RegisterHostRegionResponse* resp) {
  return RunUnary("RegisterHostRegion", "", std::to_string(req->nbytes()), Dispatch::kExecutor,
                  [this, req, resp](const std::atomic<bool>&) -> Status {
                    if (!req->shm_name().empty()) {
                      return PermissionDenied("shm_name \"" + req->shm_name() +
                                              "\": zarrd maps only shared memory it creates; leave "
                                              "shm_name empty and map the answer's shm_name");
                    }
                    ZARRD_ASSIGN_OR_RETURN(
                        auto region, state_.host_regions.Create(req->nbytes(), req->client_pid()));
                    resp->set_region_id(region->id());
                    resp->set_nbytes(region->size());
                    resp->set_shm_name(region->shm_name());
                    return OkStatus();
                  });
}

grpc::ServerUnaryReactor* ZarrdService::UnregisterHostRegion(
    grpc::CallbackServerContext*, const pb::UnregisterHostRegionRequest* req,
    pb::UnregisterHostRegionResponse*) {
  return RunUnary("UnregisterHostRegion", "", req->region_id(), Dispatch::kShort,
                  [this, req](const std::atomic<bool>&) {
                    return state_.host_regions.Unregister(req->region_id());
                  });
}

grpc::ServerUnaryReactor* ZarrdService::ReleaseLease(grpc::CallbackServerContext*,
                                                     const pb::ReleaseLeaseRequest* req,
                                                     pb::ReleaseLeaseResponse*) {
  return RunUnary("ReleaseLease", "", std::to_string(req->lease_id()), Dispatch::kShort,
                  [this, req](const std::atomic<bool>&) {
                    return state_.devices->ReleaseLease(req->lease_id());
                  });
}

grpc::ServerUnaryReactor* ZarrdService::RegisterDeviceRegion(
    grpc::CallbackServerContext*, const pb::RegisterDeviceRegionRequest* req,
    pb::RegisterDeviceRegionResponse* resp) {
  return RunUnary("RegisterDeviceRegion", "", req->gpu_uuid(), Dispatch::kExecutor,
                  [this, req, resp](const std::atomic<bool>&) -> Status {
                    ZARRD_ASSIGN_OR_RETURN(
                        std::string id, state_.devices->RegisterRegion(DeviceRegionFromWire(*req)));
                    resp->set_region_id(id);
                    return OkStatus();
                  });
}

grpc::ServerUnaryReactor* ZarrdService::UnregisterDeviceRegion(
    grpc::CallbackServerContext*, const pb::UnregisterDeviceRegionRequest* req,
    pb::UnregisterDeviceRegionResponse*) {
  return RunUnary("UnregisterDeviceRegion", "", req->region_id(), Dispatch::kExecutor,
                  [this, req](const std::atomic<bool>&) {
                    return state_.devices->UnregisterRegion(req->region_id());
                  });
}

}  // namespace zarrd::server
