#include "client/string_result.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "client/npy.h"
#include "common/util/base64.h"
#include "proto/error_detail.h"

namespace zarrd::client {

using nlohmann::json;

Result<std::string> Client::GetStrings(const NodeInfo& node, const pb::Selection& selection,
                                       pb::ArrayDescriptor* descriptor) {
  pb::GetItemRequest req;
  req.set_store(node.store);
  req.set_path(node.path);
  *req.mutable_selection() = selection;
  req.set_prototype(pb::PROTOTYPE_HOST);
  {
    grpc::ClientContext ctx;
    pb::GetItemResponse resp;
    Status s = wire::FromGrpcStatus(stub_->GetItem(&ctx, req, &resp));
    if (s.ok()) {
      if (descriptor) *descriptor = resp.array();
      return std::move(*resp.mutable_data());
    }
    if (s.reason() != reason::kUnaryResultTooLarge) return s;
  }
  grpc::ClientContext ctx;
  auto reader = stub_->GetItemStream(&ctx, req);
  pb::GetItemResponse msg;
  std::string out;
  bool first = true;
  while (reader->Read(&msg)) {
    if (first) {
      if (descriptor) *descriptor = msg.array();
      if (msg.array().nbytes() > (uint64_t{1} << 40)) {
        return DataLoss("a string result of " + std::to_string(msg.array().nbytes()) + " bytes");
      }
      out.resize(msg.array().nbytes());
      first = false;
    }
    if (msg.offset() > out.size() || msg.data().size() > out.size() - msg.offset()) {
      ctx.TryCancel();
      return DataLoss("the server sent a piece outside the result");
    }
    std::memcpy(out.data() + msg.offset(), msg.data().data(), msg.data().size());
  }
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(reader->Finish()));
  return out;
}

Status WriteStringResult(const NodeInfo& node, const std::string& wire,
                         const std::vector<int64_t>& shape, const std::string& out) {
  Status s;
  if (node.numpy_dtype != "|O") {
    if (out.size() > 4 && out.substr(out.size() - 4) == ".npy") {
      s = WriteNpy(out, node.numpy_dtype, shape, reinterpret_cast<const uint8_t*>(wire.data()),
                   wire.size());
    } else {
      std::ofstream f(out, std::ios::binary);
      f.write(wire.data(), static_cast<std::streamsize>(wire.size()));
      if (!f) s = ErrnoStatus(errno, "cannot write " + out);
    }
  } else {
    std::ofstream f(out, std::ios::binary);
    for (size_t at = 0; at + 4 <= wire.size();) {
      uint32_t len;
      std::memcpy(&len, wire.data() + at, 4);
      at += 4;
      if (len > wire.size() - at) return DataLoss("a string result is cut off");
      const std::string item = wire.substr(at, len);
      at += len;
      f << (node.data_type == "string"
                ? json(item).dump(-1, ' ', false, json::error_handler_t::replace)
                : Base64Encode(item))
        << "\n";
    }
    if (!f) s = ErrnoStatus(errno, "cannot write " + out);
  }
  return s;
}

}  // namespace zarrd::client
