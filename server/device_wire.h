// The device backend's plain types to and from the wire's messages: the one place the DEVICE
// path meets zarrd.proto.
#pragma once

#include <cstdint>

#include "server/device_backend.h"
#include "zarrd/v1/zarrd.pb.h"

namespace zarrd::server {

namespace pb = ::zarrd::v1;

DeviceReadTarget DeviceReadTargetFromWire(const pb::GetItemRequest& req);
// `epoch` is the server's: clients key their IPC mappings by it.
void DeviceResultToWire(const DeviceResult& result, uint64_t epoch, pb::DeviceBuffer* out);
DeviceWriteSource DeviceWriteSourceFromWire(const pb::SetItemRequest& req);
DeviceRegionRegistration DeviceRegionFromWire(const pb::RegisterDeviceRegionRequest& req);
void DeviceInventoryToWire(const DeviceInventory& inventory, pb::ServerInfoResponse* out);

}  // namespace zarrd::server
