#include "client/piece_reader.h"

#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/support/sync_stream.h>

#include <cstring>
#include <vector>

#include "client/client.h"

namespace zarrd::client {

namespace {

// A cursor over the slices of one message.
class SliceCursor {
 public:
  explicit SliceCursor(const std::vector<grpc::Slice>& slices) : slices_(slices) {}

  bool done() {
    while (slice_ < slices_.size() && at_ == slices_[slice_].size()) ++slice_, at_ = 0;
    return slice_ == slices_.size();
  }
  bool Byte(uint8_t* b) {
    if (done()) return false;
    *b = slices_[slice_].begin()[at_++];
    return true;
  }
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!Byte(&b)) return false;
      *v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  // Copies n bytes to `to` (or skips them when `to` is null).
  bool Take(size_t n, uint8_t* to) {
    while (n > 0) {
      if (done()) return false;
      const size_t k = std::min(n, slices_[slice_].size() - at_);
      if (to) std::memcpy(to, slices_[slice_].begin() + at_, k), to += k;
      at_ += k;
      n -= k;
    }
    return true;
  }

 private:
  const std::vector<grpc::Slice>& slices_;
  size_t slice_ = 0, at_ = 0;
};

}  // namespace

Result<PieceStreamResult> ReadPieces(
    grpc::ChannelInterface* channel, const char* method, const google::protobuf::Message& request,
    grpc::ClientContext* context, uint8_t* out, size_t size,
    const std::function<Status(const v1::ArrayDescriptor&)>& on_first) {
  const grpc::internal::RpcMethod rpc(method, grpc::internal::RpcMethod::SERVER_STREAMING);
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(channel, rpc, context,
                                                                    request));
  PieceStreamResult result;
  Status failed;
  grpc::ByteBuffer message;
  std::vector<grpc::Slice> slices;
  std::string descriptor;
  bool first = true;
  while (failed.ok() && reader->Read(&message)) {
    slices.clear();
    if (!message.Dump(&slices).ok()) {
      failed = DataLoss("a stream message could not be read");
      break;
    }
    SliceCursor cursor(slices);
    // Serializers write fields in number order, so a piece's offset (2) precedes its data (3).
    uint64_t offset = 0;
    while (failed.ok() && !cursor.done()) {
      uint64_t tag, n;
      if (!cursor.Varint(&tag)) {
        failed = DataLoss("a stream message does not parse");
        break;
      }
      const uint32_t field = static_cast<uint32_t>(tag >> 3), wire = tag & 7;
      if (wire == 0) {
        if (!cursor.Varint(&n)) failed = DataLoss("a stream message does not parse");
        if (field == 2) offset = n;
        continue;
      }
      if (wire != 2 || !cursor.Varint(&n)) {
        failed = DataLoss("a stream message has an unexpected field");
        break;
      }
      if (field == 3) {
        if (offset > size || n > size - offset) {
          failed = DataLoss("the server sent a piece outside the result");
          break;
        }
        if (!cursor.Take(n, out + offset)) failed = DataLoss("a stream message is truncated");
        result.bytes += n;
      } else if (field == 1) {
        descriptor.resize(n);
        if (!cursor.Take(n, reinterpret_cast<uint8_t*>(descriptor.data())) ||
            !result.array.ParseFromString(descriptor)) {
          failed = DataLoss("a stream's descriptor does not parse");
        }
        result.has_array = true;
      } else if (!cursor.Take(n, nullptr)) {
        failed = DataLoss("a stream message is truncated");
      }
    }
    if (first && failed.ok() && on_first) failed = on_first(result.array);
    first = false;
  }
  if (!failed.ok()) {
    context->TryCancel();
    reader->Finish();
    return failed;
  }
  ZARRD_RETURN_IF_ERROR(FromGrpc(reader->Finish()));
  return result;
}

}  // namespace zarrd::client
