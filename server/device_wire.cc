#include "server/device_wire.h"

namespace zarrd::server {
namespace {

DeviceRegionSlice SliceFromWire(const pb::DeviceRegionTarget& target) {
  return {.region_id = target.region_id(), .offset = target.offset(), .nbytes = target.nbytes()};
}

}  // namespace

DeviceReadTarget DeviceReadTargetFromWire(const pb::GetItemRequest& req) {
  DeviceReadTarget target{.device_uuid = req.device_uuid(),
                          .client_pid = req.client_pid(),
                          .answer_before_ready = req.answer_before_ready()};
  if (req.has_device_region()) target.region = SliceFromWire(req.device_region());
  return target;
}

void DeviceResultToWire(const DeviceResult& result, uint64_t epoch, pb::DeviceBuffer* out) {
  out->set_gpu_uuid(result.gpu_uuid);
  out->set_server_epoch(epoch);
  out->set_slab_id(result.slab_id);
  out->set_ipc_handle(result.ipc_handle);
  out->set_offset(result.offset);
  out->set_nbytes(result.nbytes);
  out->set_lease_id(result.lease_id);
  out->set_lease_expiry_unix_ms(result.lease_expiry_unix_ms);
  out->set_ready_event_id(result.ready_event_id);
  out->set_ready_event_handle(result.ready_event_handle);
}

DeviceWriteSource DeviceWriteSourceFromWire(const pb::SetItemRequest& req) {
  DeviceWriteSource source{.lease_id = req.lease_id()};
  if (req.has_device_region()) source.region = SliceFromWire(req.device_region());
  return source;
}

DeviceRegionRegistration DeviceRegionFromWire(const pb::RegisterDeviceRegionRequest& req) {
  return {.gpu_uuid = req.gpu_uuid(),
          .ipc_handle = req.ipc_handle(),
          .handle_offset = req.handle_offset(),
          .nbytes = req.nbytes(),
          .client_pid = req.client_pid()};
}

void DeviceInventoryToWire(const DeviceInventory& inventory, pb::ServerInfoResponse* out) {
  out->set_lease_ttl_seconds(inventory.lease_ttl_seconds);
  for (const DevicePoolState& d : inventory.devices) {
    auto* di = out->add_devices();
    di->set_uuid(d.gpu_uuid);
    di->set_ordinal(d.ordinal);
    di->set_name(d.name);
    di->set_total_memory(d.total_memory);
    auto* p = out->add_pools();
    p->set_gpu_uuid(d.gpu_uuid);
    p->set_capacity_bytes(d.capacity_bytes);
    p->set_reserved_bytes(d.reserved_bytes);
    p->set_in_use_bytes(d.in_use_bytes);
    p->set_leased_bytes(d.leased_bytes);
    p->set_slabs(d.slabs);
    p->set_leases(d.leases);
    p->set_device_regions(d.device_regions);
  }
}

}  // namespace zarrd::server
