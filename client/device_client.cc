#include "client/device_client.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/cuda/cuda_status.h"
#include "common/cuda/device_info.h"

namespace zarrd::client {

DeviceArray::~DeviceArray() { (void)Release(); }

Status DeviceArray::Release() {
  if (released_ || buffer_.lease_id() == 0) return OkStatus();
  released_ = true;
  grpc::ClientContext ctx;
  pb::ReleaseLeaseRequest req;
  req.set_lease_id(buffer_.lease_id());
  pb::ReleaseLeaseResponse resp;
  return wire::FromGrpcStatus(stub_->ReleaseLease(&ctx, req, &resp));
}

DeviceRegion::~DeviceRegion() {
  grpc::ClientContext ctx;
  pb::UnregisterDeviceRegionRequest req;
  req.set_region_id(id_);
  pb::UnregisterDeviceRegionResponse resp;
  (void)stub_->UnregisterDeviceRegion(&ctx, req, &resp);
}

Result<int> DeviceClient::Ordinal(const std::string& gpu_uuid) {
  std::lock_guard lock(mutex_);
  auto it = ordinals_.find(gpu_uuid);
  if (it != ordinals_.end()) return it->second;
  ZARRD_ASSIGN_OR_RETURN(cuda::DeviceInfo info, cuda::FindDevice(gpu_uuid));
  ordinals_[gpu_uuid] = info.ordinal;
  return info.ordinal;
}

Result<std::shared_ptr<cuda::IpcMapping>> DeviceClient::Map(const pb::DeviceBuffer& buffer) {
  ZARRD_ASSIGN_OR_RETURN(int ordinal, Ordinal(buffer.gpu_uuid()));
  std::lock_guard lock(mutex_);
  UseEpoch(buffer.server_epoch());
  auto it = slabs_.find(buffer.slab_id());
  if (it != slabs_.end()) return it->second;
  if (buffer.ipc_handle().size() != sizeof(cuda::IpcHandleBytes)) {
    return DataLoss("the server sent an IPC handle of " +
                    std::to_string(buffer.ipc_handle().size()) + " bytes");
  }
  cuda::IpcHandleBytes handle;
  std::copy(buffer.ipc_handle().begin(), buffer.ipc_handle().end(), handle.begin());
  ZARRD_ASSIGN_OR_RETURN(auto mapping, cuda::IpcMapping::Open(ordinal, handle));
  ++opens_;
  slabs_[buffer.slab_id()] = mapping;
  return mapping;
}

void DeviceClient::UseEpoch(uint64_t epoch) {
  if (epoch == epoch_) return;
  // The server restarted: its old slabs and events are gone.
  slabs_.clear();
  for (const auto& [id, event] : ready_events_) stale_events_.push_back(event);
  ready_events_.clear();
  epoch_ = epoch;
}

Status DeviceClient::WaitReady(const pb::DeviceBuffer& buffer,
                               std::optional<cudaStream_t> ready_on) {
  if (buffer.ready_event_handle().empty()) return OkStatus();
  if (buffer.ready_event_handle().size() != sizeof(cudaIpcEventHandle_t)) {
    return DataLoss("the server sent a ready event handle of " +
                    std::to_string(buffer.ready_event_handle().size()) + " bytes");
  }
  ZARRD_ASSIGN_OR_RETURN(int ordinal, Ordinal(buffer.gpu_uuid()));
  ZARRD_RETURN_IF_ERROR(cuda::UseDevice(ordinal));
  cudaEvent_t event = nullptr;
  {
    std::lock_guard lock(mutex_);
    UseEpoch(buffer.server_epoch());
    auto it = ready_events_.find(buffer.ready_event_id());
    if (it != ready_events_.end()) {
      event = it->second;
    } else {
      cudaIpcEventHandle_t handle;
      std::memcpy(&handle, buffer.ready_event_handle().data(), sizeof(handle));
      ZARRD_RETURN_IF_ERROR(
          cuda::CudaStatus(cudaIpcOpenEventHandle(&event, handle), "cudaIpcOpenEventHandle"));
      ready_events_[buffer.ready_event_id()] = event;
      ++ready_opens_;
    }
  }
  if (ready_on) {
    return cuda::CudaStatus(cudaStreamWaitEvent(*ready_on, event, 0),
                            "ordering a stream after the DEVICE result");
  }
  return cuda::CudaStatus(cudaEventSynchronize(event), "waiting for the DEVICE result");
}

uint64_t DeviceClient::ready_events_opened() const {
  std::lock_guard lock(mutex_);
  return ready_opens_;
}

uint64_t DeviceClient::handle_opens() const {
  std::lock_guard lock(mutex_);
  return opens_;
}

Result<std::unique_ptr<DeviceArray>> DeviceClient::Get(const std::string& store,
                                                       const std::string& path,
                                                       const pb::Selection& selection,
                                                       const std::string& gpu_uuid,
                                                       std::optional<cudaStream_t> ready_on) {
  pb::GetItemRequest req;
  req.set_store(store);
  req.set_path(path);
  *req.mutable_selection() = selection;
  req.set_prototype(pb::PROTOTYPE_DEVICE);
  req.set_device_uuid(gpu_uuid);
  req.set_client_pid(::getpid());
  req.set_answer_before_ready(answer_before_ready_);
  grpc::ClientContext ctx;
  pb::GetItemResponse resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(client_.stub().GetItem(&ctx, req, &resp)));
  std::unique_ptr<DeviceArray> array(new DeviceArray());
  array->stub_ = &client_.stub();
  array->descriptor_ = resp.array();
  array->buffer_ = resp.device_buffer();
  // From here on the lease is released if mapping fails.
  ZARRD_ASSIGN_OR_RETURN(array->mapping_, Map(resp.device_buffer()));
  array->data_ = array->mapping_->base() + resp.device_buffer().offset();
  ZARRD_RETURN_IF_ERROR(WaitReady(resp.device_buffer(), ready_on));
  return array;
}

Status DeviceClient::SetFromArray(const std::string& store, const std::string& path,
                                  const pb::Selection& selection, const DeviceArray& array) {
  pb::SetItemRequest req;
  req.set_store(store);
  req.set_path(path);
  *req.mutable_selection() = selection;
  req.set_lease_id(array.buffer().lease_id());
  grpc::ClientContext ctx;
  pb::SetItemResponse resp;
  return wire::FromGrpcStatus(client_.stub().SetItem(&ctx, req, &resp));
}

Result<std::unique_ptr<DeviceRegion>> DeviceClient::RegisterRegion(void* data, uint64_t nbytes) {
  ZARRD_ASSIGN_OR_RETURN(auto exported, cuda::ExportIpc(data));
  int device = 0;
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, data) == cudaSuccess) device = attributes.device;
  ZARRD_ASSIGN_OR_RETURN(auto devices, cuda::ListDevices());
  auto info = std::find_if(devices.begin(), devices.end(),
                           [&](const cuda::DeviceInfo& d) { return d.ordinal == device; });
  if (info == devices.end()) return Internal("the region's device is not visible");
  pb::RegisterDeviceRegionRequest req;
  req.set_gpu_uuid(info->uuid);
  req.set_ipc_handle(exported.first.data(), exported.first.size());
  req.set_handle_offset(exported.second);
  req.set_nbytes(nbytes);
  req.set_client_pid(::getpid());
  grpc::ClientContext ctx;
  pb::RegisterDeviceRegionResponse resp;
  ZARRD_RETURN_IF_ERROR(
      wire::FromGrpcStatus(client_.stub().RegisterDeviceRegion(&ctx, req, &resp)));
  std::unique_ptr<DeviceRegion> region(new DeviceRegion());
  region->stub_ = &client_.stub();
  region->id_ = resp.region_id();
  region->data_ = data;
  region->size_ = nbytes;
  return region;
}

Status DeviceClient::GetInto(const std::string& store, const std::string& path,
                             const pb::Selection& selection, const DeviceRegion& region,
                             uint64_t offset, uint64_t nbytes, pb::ArrayDescriptor* descriptor,
                             std::optional<cudaStream_t> ready_on) {
  pb::GetItemRequest req;
  req.set_store(store);
  req.set_path(path);
  *req.mutable_selection() = selection;
  req.set_prototype(pb::PROTOTYPE_DEVICE);
  req.set_client_pid(::getpid());
  auto* target = req.mutable_device_region();
  target->set_region_id(region.id());
  target->set_offset(offset);
  target->set_nbytes(nbytes);
  req.set_answer_before_ready(answer_before_ready_);
  grpc::ClientContext ctx;
  pb::GetItemResponse resp;
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(client_.stub().GetItem(&ctx, req, &resp)));
  if (descriptor) *descriptor = resp.array();
  return WaitReady(resp.device_buffer(), ready_on);
}

Status DeviceClient::SetFrom(const std::string& store, const std::string& path,
                             const pb::Selection& selection, const DeviceRegion& region,
                             uint64_t offset, uint64_t nbytes) {
  pb::SetItemRequest req;
  req.set_store(store);
  req.set_path(path);
  *req.mutable_selection() = selection;
  auto* target = req.mutable_device_region();
  target->set_region_id(region.id());
  target->set_offset(offset);
  target->set_nbytes(nbytes);
  grpc::ClientContext ctx;
  pb::SetItemResponse resp;
  return wire::FromGrpcStatus(client_.stub().SetItem(&ctx, req, &resp));
}

}  // namespace zarrd::client
