// zarrd-device-probe ADDRESS: a C++ client process for the GPU tests, driven by one command a
// line on stdin; each prints one JSON line (or {"error": ...}).
//   get STORE PATH [SELECTION]      DEVICE read through DeviceClient: the checksum computed on
//                                   the GPU, lease and slab, and the IPC handles opened so far
//   stream STORE PATH [SELECTION]   the same read complete in the order of a stream of this
//                                   process: copied on that stream, then the copy's checksum
//   host STORE PATH                 HOST read of all of PATH through Client::Get (its default
//                                   transport: shared memory over a Unix socket)
//   host-bytes STORE PATH           the same through the bytes transport
//   copy STORE SRC DST              DEVICE read of all of SRC, written back into all of DST from
//                                   the lease (SetItem from GPU memory)
//   region STORE PATH SRC_SEL DST_SEL
//                                   registers a cudaMalloc'd region, reads SRC_SEL into it at an
//                                   offset, writes it back into DST_SEL; checksum of the region
// The channel reconnects by itself when zarrd restarts on the same socket, and the DeviceClient
// (its handle cache) lives as long as the process.
#include <cuda_runtime.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "client/device_client.h"
#include "common/index/selection.h"

using nlohmann::json;
namespace zc = zarrd::client;

namespace {

json Error(const zarrd::Status& s) { return {{"error", s.ToString()}}; }

json Checksum(const void* data, uint64_t nbytes, int device) {
  auto sum = zc::ChecksumOnDevice(data, nbytes, device);
  if (!sum.ok()) return Error(sum.status());
  return {{"sum", sum->sum}, {"weighted", sum->weighted}, {"nbytes", nbytes}};
}

json Get(zc::DeviceClient& devices, const std::string& store, const std::string& path,
         const std::string& text) {
  auto sel = zc::SelectionFromText(text);
  if (!sel.ok()) return Error(sel.status());
  auto array = devices.Get(store, path, *sel);
  if (!array.ok()) return Error(array.status());
  json out = Checksum((*array)->data(), (*array)->nbytes(), (*array)->device());
  out["lease"] = (*array)->buffer().lease_id();
  out["slab"] = (*array)->buffer().slab_id();
  out["opens"] = devices.handle_opens();
  out["ready_events_opened"] = devices.ready_events_opened();
  return out;
}

json StreamGet(zc::DeviceClient& devices, const std::string& store, const std::string& path,
               const std::string& text) {
  auto sel = zc::SelectionFromText(text);
  if (!sel.ok()) return Error(sel.status());
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    return {{"error", "cudaStreamCreate"}};
  }
  json out;
  auto array = devices.Get(store, path, *sel, "", stream);
  if (!array.ok()) {
    out = Error(array.status());
  } else {
    void* copy = nullptr;
    const uint64_t nbytes = (*array)->nbytes();
    if (cudaMalloc(&copy, std::max<uint64_t>(nbytes, 1)) != cudaSuccess ||
        cudaMemcpyAsync(copy, (*array)->data(), nbytes, cudaMemcpyDeviceToDevice, stream) !=
            cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess) {
      out = {{"error", "the copy on the stream failed"}};
    } else {
      out = Checksum(copy, nbytes, (*array)->device());
    }
    cudaFree(copy);
  }
  cudaStreamDestroy(stream);
  return out;
}

json HostGet(zc::Client& client, const std::string& store, const std::string& path,
             std::vector<uint8_t>* buffer) {
  auto node = client.GetNode(store, path);
  if (!node.ok()) return Error(node.status());
  buffer->resize(node->num_bytes());
  zarrd::Status s = client.Get(store, path, {}, buffer->data(), buffer->size());
  return s.ok() ? json{{"nbytes", buffer->size()}} : Error(s);
}

json Copy(zc::DeviceClient& devices, const std::string& store, const std::string& src,
          const std::string& dst) {
  auto array = devices.Get(store, src, {});
  if (!array.ok()) return Error(array.status());
  zarrd::Status s = devices.SetFromArray(store, dst, {}, **array);
  return s.ok() ? json{{"nbytes", (*array)->nbytes()}} : Error(s);
}

json Region(zc::Client& client, zc::DeviceClient& devices, const std::string& store,
            const std::string& path, const std::string& src, const std::string& dst) {
  auto node = client.GetNode(store, path);
  if (!node.ok()) return Error(node.status());
  auto parsed = zarrd::ParseSelection(src);
  if (!parsed.ok()) return Error(parsed.status());
  auto resolved = zarrd::ResolveSelection(*parsed, node->shape);
  if (!resolved.ok()) return Error(resolved.status());
  const uint64_t nbytes = resolved->num_elements() * node->item_size(), offset = 4096;
  void* mem = nullptr;
  if (cudaMalloc(&mem, offset + nbytes) != cudaSuccess) return {{"error", "cudaMalloc"}};
  json out;
  {
    auto region = devices.RegisterRegion(mem, offset + nbytes);
    zarrd::Status s = region.ok() ? zarrd::OkStatus() : region.status();
    if (s.ok())
      s = devices.GetInto(store, path, *zc::SelectionFromText(src), **region, offset, nbytes);
    if (s.ok())
      s = devices.SetFrom(store, path, *zc::SelectionFromText(dst), **region, offset, nbytes);
    out = s.ok() ? Checksum(static_cast<uint8_t*>(mem) + offset, nbytes, 0) : Error(s);
    if (region.ok()) out["region"] = (*region)->id();
  }  // unregistered here, before the memory goes
  cudaFree(mem);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: zarrd-device-probe ADDRESS\n";
    return 2;
  }
  auto client = zc::Client::Connect(argv[1], 20);
  if (!client.ok()) {
    std::cerr << client.status().ToString() << "\n";
    return 1;
  }
  zc::DeviceClient devices(**client);
  std::vector<uint8_t> host_buffer;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd, store, a, b, c;
    in >> cmd >> store >> a;
    json out;
    if (cmd == "get") {
      std::getline(in, b);
      out = Get(devices, store, a, b);
    } else if (cmd == "stream") {
      std::getline(in, b);
      out = StreamGet(devices, store, a, b);
    } else if (cmd == "host" || cmd == "host-bytes") {
      const bool shared = (*client)->use_shared_memory();
      (*client)->set_use_shared_memory(shared && cmd == "host");
      out = HostGet(**client, store, a, &host_buffer);
      (*client)->set_use_shared_memory(shared);
    } else if (cmd == "copy") {
      in >> b;
      out = Copy(devices, store, a, b);
    } else if (cmd == "region") {
      in >> b >> c;
      out = Region(**client, devices, store, a, b, c);
    } else {
      out = {{"error", "unknown command " + cmd}};
    }
    std::cout << out.dump() << std::endl;
  }
  return 0;
}
