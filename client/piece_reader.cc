#include "client/piece_reader.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include "client/client.h"
#include "proto/piece_wire.h"

namespace zarrd::client {

namespace {

// One server-streaming call through gRPC's generic stub, its operations completed one at a time
// on a queue of its own (as the synchronous API does inside).
class RawStream {
 public:
  RawStream(grpc::ChannelInterface* channel, const char* method, grpc::ClientContext* context)
      // The stub does not own the caller's channel.
      : stub_(std::shared_ptr<grpc::ChannelInterface>(std::shared_ptr<void>(), channel)),
        call_(stub_.PrepareCall(context, method, &queue_)) {
    call_->StartCall(this);
    started_ = Wait();
  }
  ~RawStream() {
    queue_.Shutdown();
    void* tag;
    bool ok;
    while (queue_.Next(&tag, &ok)) {
    }
  }

  bool Send(const google::protobuf::Message& request) {
    grpc::ByteBuffer bytes;
    bool own = false;
    if (!started_ ||
        !grpc::SerializationTraits<google::protobuf::Message>::Serialize(request, &bytes, &own)
             .ok()) {
      return false;
    }
    call_->WriteLast(bytes, grpc::WriteOptions(), this);
    return Wait();
  }
  bool Read(grpc::ByteBuffer* message) {
    call_->Read(message, this);
    return Wait();
  }
  grpc::Status Finish() {
    grpc::Status status;
    call_->Finish(&status, this);
    Wait();
    return status;
  }

 private:
  bool Wait() {
    void* tag;
    bool ok = false;
    return queue_.Next(&tag, &ok) && ok;
  }

  grpc::CompletionQueue queue_;
  grpc::GenericStub stub_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  bool started_ = false;
};

}  // namespace

Result<PieceStreamResult> ReadPieces(
    grpc::ChannelInterface* channel, const char* method, const google::protobuf::Message& request,
    grpc::ClientContext* context, uint8_t* out, size_t size,
    const std::function<Status(const v1::ArrayDescriptor&)>& on_first) {
  RawStream stream(channel, method, context);
  PieceStreamResult result;
  Status failed;
  grpc::ByteBuffer message;
  bool first = true;
  if (stream.Send(request)) {
    while (failed.ok() && stream.Read(&message)) {
      grpc::ProtoBufferReader reader(&message);
      auto piece = wire::DecodePiece(&reader, out, size);
      if (!piece.ok()) {
        failed = piece.status();
        break;
      }
      result.bytes += piece->data_bytes;
      if (piece->has_array) {
        result.array = std::move(piece->array);
        result.has_array = true;
      }
      if (first && on_first) failed = on_first(result.array);
      first = false;
    }
  }
  if (!failed.ok()) {
    context->TryCancel();
    stream.Finish();
    return failed;
  }
  ZARRD_RETURN_IF_ERROR(wire::FromGrpcStatus(stream.Finish()));
  return result;
}

}  // namespace zarrd::client
