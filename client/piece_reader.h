// Reads a server stream of GetItemResponse pieces ({offset, data}) straight off the wire into a
// caller's buffer: the data bytes are copied once, from gRPC's slices to their place, instead
// of into a protobuf message first (used by Client::Get and by bench/serve_read's bare stream).
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>

#include "common/util/status.h"
#include "zarrd/v1/zarrd.pb.h"

namespace zarrd::client {

struct PieceStreamResult {
  uint64_t bytes = 0;         // data bytes received
  v1::ArrayDescriptor array;  // from the first message, when it has one
  bool has_array = false;
};

// Calls the server-streaming `method` ("/zarrd.v1.Zarrd/GetItemStream") with `request` and
// places every piece in out[offset, offset + size). A piece outside `out` is DATA_LOSS (the call
// is cancelled). `on_first` sees the first message's descriptor and may refuse the stream.
Result<PieceStreamResult> ReadPieces(
    grpc::ChannelInterface* channel, const char* method, const google::protobuf::Message& request,
    grpc::ClientContext* context, uint8_t* out, size_t size,
    const std::function<Status(const v1::ArrayDescriptor&)>& on_first = nullptr);

}  // namespace zarrd::client
