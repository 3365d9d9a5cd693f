// The streaming RPCs: GetItemStream sends a result in pieces as bands of chunks finish decoding;
// SetItemStream gathers pieces of an input and writes them once complete.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <optional>

#include "common/index/band_plan.h"
#include "common/util/checked.h"
#include "proto/error_detail.h"
#include "proto/piece_wire.h"
#include "server/prepared_request.h"
#include "server/service.h"

namespace zarrd::server {

namespace {

// A GetItemResponse{offset, data} on the wire: a small header slice, then a slice that points
// into the decoded band (kept alive by the slice's reference).
grpc::ByteBuffer PieceMessage(const std::shared_ptr<uint8_t[]>& band, size_t at, size_t n,
                              uint64_t offset) {
  uint8_t header[wire::kMaxPieceHeader];
  const size_t h = wire::EncodePieceHeader(offset, n, header);
  auto* keep = new std::shared_ptr<uint8_t[]>(band);
  grpc::Slice slices[2] = {
      grpc::Slice(header, h),
      grpc::Slice(
          band.get() + at, n, [](void* p) { delete static_cast<std::shared_ptr<uint8_t[]>*>(p); },
          keep)};
  return grpc::ByteBuffer(slices, 2);
}

class GetItemStreamReactor : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  GetItemStreamReactor(ServiceState& state, const grpc::ByteBuffer* raw)
      : state_(state), scope_(state.requests, *state.metrics, "GetItemStream", "", "") {
    // The producer holds one executor thread for the stream's life (it waits for queue space).
    grpc::ByteBuffer copy(*raw);
    parsed_ = grpc::SerializationTraits<pb::GetItemRequest>::Deserialize(&copy, &request_);
    req_ = &request_;
    if (parsed_.ok()) scope_.Name(req_->store(), req_->path());
    state_.executor.Submit([this] { Produce(); });
  }

  void OnWriteDone(bool ok) override {
    std::unique_lock lock(mutex_);
    writing_ = false;
    queue_.pop_front();
    if (!ok) Cancel();
    space_.notify_all();
    WriteNext(lock);
  }
  void OnCancel() override {
    std::lock_guard lock(mutex_);
    Cancel();
    space_.notify_all();
  }
  void OnDone() override { delete this; }

 private:
  void Cancel() {
    cancelled_ = true;
    cancelled_flag_ = true;  // stops the engine's decoding
  }

  // One write in flight at a time; Finish only once nothing is in flight. Called with `lock` held
  // on mutex_; Finish comes after unlocking it, since OnDone may delete this reactor at once on
  // another thread (the producer's thread is no reaction that gRPC waits for).
  void WriteNext(std::unique_lock<std::mutex>& lock) {
    if (writing_) return;
    if (!queue_.empty() && !cancelled_) {
      writing_ = true;
      StartWrite(&queue_.front());
      return;
    }
    if (producer_done_ && !finished_ && (queue_.empty() || cancelled_)) {
      finished_ = true;
      const Status sent = cancelled_ && final_.ok() ? Cancelled("client went away") : final_;
      scope_.Finish(sent);
      if (sent.ok()) state_.metrics->BytesRead("host", bytes_sent_);
      lock.unlock();
      Finish(wire::ToGrpcStatus(sent));  // the last touch of this reactor
    }
  }

  // Queues a message, waiting while two bands' worth of pieces are already queued.
  bool Push(grpc::ByteBuffer msg, size_t max_queued) {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [&] { return cancelled_ || queue_.size() < max_queued; });
    if (cancelled_) return false;
    queue_.push_back(std::move(msg));
    WriteNext(lock);  // never finishes: the producer is not done
    return true;
  }

  void Produce() {
    Status s = ProduceAll();
    std::unique_lock lock(mutex_);
    producer_done_ = true;
    final_ = s;
    WriteNext(lock);
  }

  // Pieces queued for the client at most: about 64 MiB.
  size_t MaxQueued() const {
    return std::max<size_t>(4, 2 * (32u << 20) / state_.config.stream_piece_bytes);
  }

  // The stream's first message: the result's descriptor.
  Status PushDescriptor(const PreparedRead& read) {
    pb::GetItemResponse first;
    *first.mutable_array() = read.descriptor;
    grpc::ByteBuffer message;
    bool own = false;
    if (!grpc::SerializationTraits<pb::GetItemResponse>::Serialize(first, &message, &own).ok()) {
      return Internal("cannot serialize the stream's first message");
    }
    if (!Push(std::move(message), MaxQueued())) return Cancelled("client went away");
    return OkStatus();
  }

  Status ProduceAll() {
    if (!parsed_.ok()) return InvalidArgument("GetItemStream: the request does not parse");
    ZARRD_RETURN_IF_ERROR(scope_.Admitted());
    if (req_->has_host_region() || req_->has_device_region()) {
      return InvalidArgument("regions: use GetItem, which writes the region in place");
    }
    ZARRD_ASSIGN_OR_RETURN(auto array, state_.arrays.Open(req_->store(), req_->path()));
    ZARRD_ASSIGN_OR_RETURN(PreparedRead read, PrepareRead(state_.config, *req_, std::move(array)));
    if (read.prototype == PrototypeKind::kDevice) {
      return InvalidArgument("GetItemStream serves HOST results; DEVICE results of " +
                             req_->store() + ":" + req_->path() + " come from GetItem");
    }
    const ArrayMetadata& m = *read.metadata;
    if (read.strings()) return ProduceStrings(read);
    const uint64_t nbytes = read.nbytes();
    const auto& config = state_.config;
    const size_t piece = config.stream_piece_bytes;
    const size_t max_queued = MaxQueued();
    ZARRD_RETURN_IF_ERROR(PushDescriptor(read));
    // Bands of about four pieces, on edges of the chunk grid (of shards when sharded). An
    // advanced selection is read in one band: its chunks are not banded.
    const bool one_band = read.advanced.has_value();
    const auto bands = one_band ? std::vector<Band>{}
                                : PlanBands(read.selection, m.chunk_shape, ItemSize(m.dtype),
                                            {.target_bytes = 4 * piece});
    uint64_t offset = 0;
    IoOptions io{.pool = &state_.stream_decoder, .cancelled = &cancelled_flag_};
    for (size_t b = 0; b < (one_band ? 1 : bands.size()); ++b) {
      const size_t band_bytes = one_band ? nbytes : bands[b].nbytes;
      // The band's bytes come out of the budget all streams share, and go back when its last
      // piece has been sent. Not zero-filled: the read writes every byte.
      ByteBudget& budget = state_.stream_budget;
      if (!budget.Acquire(band_bytes, *bands_held_ == 0, cancelled_flag_)) {
        return Cancelled("client went away");
      }
      ++*bands_held_;
      BufferCache& cache = state_.band_buffers;
      std::shared_ptr<uint8_t[]> buffer(
          cache.Take(band_bytes).release(),
          [&budget, &cache, band_bytes, held = bands_held_](uint8_t* p) {
            cache.Give(std::unique_ptr<uint8_t[]>(p), band_bytes);
            --*held;
            budget.Release(band_bytes);
          });
      ZARRD_RETURN_IF_ERROR(
          one_band ? read.ReadInto(buffer.get(), band_bytes, io)
                   : read.array->ReadResolved(bands[b].selection, buffer.get(), band_bytes, io));
      for (size_t at = 0; at < band_bytes; at += piece) {
        const size_t n = std::min(piece, band_bytes - at);
        if (!Push(PieceMessage(buffer, at, n, offset + at), max_queued)) {
          return Cancelled("client went away");
        }
      }
      offset += band_bytes;
    }
    bytes_sent_ = offset;
    return OkStatus();
  }

  // A string result's size is known once it is read: it is read whole, then sent in pieces.
  Status ProduceStrings(PreparedRead& read) {
    IoOptions io{.pool = &state_.stream_decoder, .cancelled = &cancelled_flag_};
    const uint64_t limit = state_.config.max_result_bytes;
    ZARRD_ASSIGN_OR_RETURN(std::string wire, read.ReadStrings(io, limit, [&](uint64_t nbytes) {
      return CheckLimit(req_->path(), "result", nbytes, limit, "max_result_bytes");
    }));
    const size_t piece = state_.config.stream_piece_bytes;
    const size_t max_queued = MaxQueued();
    ZARRD_RETURN_IF_ERROR(PushDescriptor(read));
    // Its bytes come out of the budget all streams share until its last piece has been sent.
    const size_t n = wire.size();
    ByteBudget& budget = state_.stream_budget;
    if (!budget.Acquire(n, *bands_held_ == 0, cancelled_flag_)) {
      return Cancelled("client went away");
    }
    ++*bands_held_;
    std::shared_ptr<uint8_t[]> buffer(new uint8_t[std::max<size_t>(n, 1)],
                                      [&budget, n, held = bands_held_](uint8_t* p) {
                                        delete[] p;
                                        --*held;
                                        budget.Release(n);
                                      });
    std::memcpy(buffer.get(), wire.data(), n);
    wire = std::string();
    for (size_t at = 0; at < n; at += piece) {
      if (!Push(PieceMessage(buffer, at, std::min(piece, n - at), at), max_queued)) {
        return Cancelled("client went away");
      }
    }
    bytes_sent_ = n;
    return OkStatus();
  }

  ServiceState& state_;
  RequestScope scope_;
  pb::GetItemRequest request_;
  grpc::Status parsed_;
  const pb::GetItemRequest* req_;
  std::mutex mutex_;
  std::condition_variable space_;
  std::deque<grpc::ByteBuffer> queue_;
  bool cancelled_ = false;
  bool writing_ = false;
  std::atomic<bool> cancelled_flag_{false};
  bool producer_done_ = false;
  bool finished_ = false;
  Status final_;
  uint64_t bytes_sent_ = 0;
  // Bands of this stream alive (decoding, queued or being sent); shared with their deleters.
  std::shared_ptr<std::atomic<int>> bands_held_ = std::make_shared<std::atomic<int>>(0);
};

class SetItemStreamReactor : public grpc::ServerReadReactor<pb::SetItemRequest> {
 public:
  SetItemStreamReactor(ServiceState& state, pb::SetItemResponse* resp)
      : state_(state),
        scope_(state.requests, *state.metrics, "SetItemStream", "", ""),
        resp_(resp) {
    StartRead(&msg_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      state_.executor.Submit([this] {
        Status s = status_.ok() ? Commit() : status_;
        scope_.Finish(s);
        if (s.ok()) state_.metrics->BytesWritten("bytes", data_.size());
        Finish(wire::ToGrpcStatus(s));
      });
      return;
    }
    if (status_.ok()) status_ = Accept();
    StartRead(&msg_);
  }
  void OnCancel() override { cancelled_ = true; }
  void OnDone() override { delete this; }

 private:
  Status Accept() {
    if (!write_) {
      ZARRD_RETURN_IF_ERROR(scope_.Admitted());
      path_ = msg_.path();
      scope_.Name(msg_.store(), path_);
      ZARRD_RETURN_IF_ERROR(state_.arrays.FindStore(msg_.store(), true));
      ZARRD_ASSIGN_OR_RETURN(auto array, state_.arrays.Open(msg_.store(), path_));
      ZARRD_ASSIGN_OR_RETURN(
          write_, PrepareWrite(state_.config, msg_.selection(), path_, std::move(array)));
      data_.resize(write_->nbytes);
    }
    const uint64_t offset = msg_.offset();
    const size_t n = msg_.data().size();
    if (write_->variable_size && offset <= state_.config.max_request_bytes &&
        n <= state_.config.max_request_bytes - offset && offset + n > data_.size()) {
      data_.resize(offset + n);  // variable-length strings: the input is what the pieces hold
    }
    if (offset > data_.size() || n > data_.size() - offset) {
      return InvalidArgument("piece [" + std::to_string(offset) + ", +" + std::to_string(n) +
                             ") lies outside the selection's " + std::to_string(data_.size()) +
                             " bytes");
    }
    std::memcpy(data_.data() + offset, msg_.data().data(), n);
    received_ += n;
    return OkStatus();
  }

  Status Commit() {
    if (!write_) return InvalidArgument("SetItemStream: no message named the array");
    if (received_ != data_.size()) {
      return InvalidArgument("SetItemStream to array '" + path_ + "': received " +
                             std::to_string(received_) + " bytes, the selection needs " +
                             std::to_string(data_.size()) + "; nothing was written");
    }
    IoOptions io{.pool = nullptr, .cancelled = &cancelled_};
    ZARRD_RETURN_IF_ERROR(write_->WriteFrom(data_.data(), data_.size(), io));
    resp_->set_nbytes_written(data_.size());
    return OkStatus();
  }

  ServiceState& state_;
  RequestScope scope_;
  pb::SetItemResponse* resp_;
  pb::SetItemRequest msg_;
  Status status_;
  std::string path_;
  std::optional<PreparedWrite> write_;
  std::vector<uint8_t> data_;
  uint64_t received_ = 0;
  std::atomic<bool> cancelled_{false};
};

// Writes `nbytes` in pieces, one write in flight as GetItemStream does: the transport alone.
// The pieces are slices over one hot piece of zeros, or over consecutive parts of a buffer as
// large as the stream (`distinct`).
class StreamBytesReactor : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  StreamBytesReactor(ServiceState& state, grpc::CallbackServerContext* context,
                     const grpc::ByteBuffer* raw)
      : scope_(state.requests, *state.metrics, "StreamBytes", "", "") {
    Status s = Start(state, context, raw);
    if (!s.ok()) {
      Finish(wire::ToGrpcStatus(scope_.Finish(s)));
      return;
    }
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(wire::ToGrpcStatus(scope_.Finish(Cancelled("client went away"))));
      return;
    }
    Next();
  }
  void OnDone() override { delete this; }

 private:
  Status Start(ServiceState& state, grpc::CallbackServerContext* context,
               const grpc::ByteBuffer* raw) {
    ZARRD_RETURN_IF_ERROR(scope_.Admitted());
    const ServerConfig& config = state.config;
    if (!config.enable_stream_bytes) {
      return Unimplemented(
          "StreamBytes is a benchmark RPC, off unless the config sets \"enable_stream_bytes\": "
          "true");
    }
    grpc::ByteBuffer copy(*raw);
    pb::StreamBytesRequest req;
    if (!grpc::SerializationTraits<pb::StreamBytesRequest>::Deserialize(&copy, &req).ok()) {
      return InvalidArgument("StreamBytes: bad request");
    }
    scope_.Name("", std::to_string(req.nbytes()));
    const uint64_t cap = std::min(config.stream_bytes_max_bytes, config.max_result_bytes);
    if (req.nbytes() > cap) {
      return ResourceExhausted("StreamBytes: " + std::to_string(req.nbytes()) +
                               " bytes exceed stream_bytes_max_bytes (or max_result_bytes), " +
                               std::to_string(cap));
    }
    remaining_ = req.nbytes();
    piece_ = req.piece_bytes() ? std::min<uint32_t>(req.piece_bytes(), 64u << 20)
                               : config.stream_piece_bytes;
    distinct_ = req.distinct();
    const uint64_t source_bytes = distinct_ ? remaining_ : std::min<uint64_t>(piece_, remaining_);
    if (!distinct_) {
      source_.reset(new uint8_t[source_bytes]());
      return OkStatus();
    }
    // Built on gRPC's thread: it stops when the client cancels or its deadline passes.
    source_ = state.stream_bytes_source.Get(source_bytes, [context] {
      return context->IsCancelled() || context->deadline() < std::chrono::system_clock::now();
    });
    if (!source_) {
      return Cancelled("StreamBytes: cancelled or past its deadline while its buffer was built");
    }
    return OkStatus();
  }

  void Next() {
    if (remaining_ == 0) {
      Finish(wire::ToGrpcStatus(scope_.Finish(OkStatus())));
      return;
    }
    const uint64_t n = std::min<uint64_t>(piece_, remaining_);
    msg_ = PieceMessage(source_, distinct_ ? sent_ : 0, n, sent_);
    sent_ += n;
    remaining_ -= n;
    StartWrite(&msg_);
  }

  RequestScope scope_;
  uint64_t remaining_ = 0, sent_ = 0;
  uint32_t piece_ = 0;
  bool distinct_ = false;
  std::shared_ptr<uint8_t[]> source_;
  grpc::ByteBuffer msg_;
};

}  // namespace

grpc::ServerWriteReactor<grpc::ByteBuffer>* ZarrdService::StreamBytes(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* req) {
  return new StreamBytesReactor(state_, context, req);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* ZarrdService::GetItemStream(
    grpc::CallbackServerContext*, const grpc::ByteBuffer* req) {
  return new GetItemStreamReactor(state_, req);
}

grpc::ServerReadReactor<pb::SetItemRequest>* ZarrdService::SetItemStream(
    grpc::CallbackServerContext*, pb::SetItemResponse* resp) {
  return new SetItemStreamReactor(state_, resp);
}

}  // namespace zarrd::server
