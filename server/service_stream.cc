// The streaming RPCs: GetItemStream sends a result in pieces as bands of chunks finish decoding;
// SetItemStream gathers pieces of an input and writes them once complete.
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <optional>

#include "common/band_plan.h"
#include "common/checked.h"
#include "proto/piece_wire.h"
#include "server/service.h"

namespace zarrd::server {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

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
  GetItemStreamReactor(ZarrdService* service, const grpc::ByteBuffer* raw) : service_(service) {
    service_->BeginRequest();
    // The producer holds one executor thread for the stream's life (it waits for queue space).
    grpc::ByteBuffer copy(*raw);
    parsed_ = grpc::SerializationTraits<pb::GetItemRequest>::Deserialize(&copy, &request_);
    req_ = &request_;
    service_->executor().Submit([this] { Produce(); });
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
  void OnDone() override {
    service_->EndRequest();
    delete this;
  }

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
      spdlog::debug("GetItemStream {}:{} -> {}{}{}", req_->store(), req_->path(),
                    StatusCodeName(sent.code()), sent.ok() ? "" : ": ", sent.message());
      service_->metrics().Request("GetItemStream", req_->store(), sent.code(), Seconds(start_));
      if (sent.ok()) service_->metrics().BytesRead("host", bytes_sent_);
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

  Status ProduceAll() {
    if (!parsed_.ok()) return InvalidArgument("GetItemStream: the request does not parse");
    if (service_->draining()) return {StatusCode::kUnavailable, "zarrd is shutting down"};
    if (req_->has_host_region() || req_->has_device_region()) {
      return InvalidArgument("regions: use GetItem, which writes the region in place");
    }
    ZARRD_ASSIGN_OR_RETURN(auto array, service_->OpenArray(req_->store(), req_->path()));
    auto m = array->metadata();
    ZARRD_ASSIGN_OR_RETURN(PrototypeKind prototype, service_->ResolvePrototype(*req_, m->rank()));
    if (prototype == PrototypeKind::kDevice) {
      return InvalidArgument("GetItemStream serves HOST results; DEVICE results of " +
                             req_->store() + ":" + req_->path() + " come from GetItem");
    }
    pb::GetItemResponse first;
    ResolvedSelection sel;
    std::optional<ResolvedAdvanced> advanced;  // read in one band: its chunks are not banded
    if (IsAdvanced(req_->selection())) {
      ZARRD_ASSIGN_OR_RETURN(
          advanced, service_->ResolveAdvanced(*array, req_->path(), req_->selection(), false));
      Describe(*m, *advanced, first.mutable_array());
    } else {
      auto basic = BasicFromWire(req_->selection(), m->shape, m->chunk_shape);
      if (!basic.ok()) return basic.status().WithContext("array '" + req_->path() + "'");
      auto resolved = ResolveSelection(*basic, m->shape);
      if (!resolved.ok()) return resolved.status().WithContext("array '" + req_->path() + "'");
      sel = std::move(*resolved);
      Describe(*m, sel, first.mutable_array());
    }
    const uint64_t nbytes = first.array().nbytes();
    const auto& config = service_->config();
    if (nbytes > config.max_result_bytes) {
      return ResourceExhausted("result of " + std::to_string(nbytes) +
                               " bytes exceeds max_result_bytes");
    }
    const size_t piece = config.stream_piece_bytes;
    const size_t max_queued = std::max<size_t>(4, 2 * (32u << 20) / piece);
    grpc::ByteBuffer first_message;
    bool own = false;
    if (!grpc::SerializationTraits<pb::GetItemResponse>::Serialize(first, &first_message, &own)
             .ok()) {
      return Internal("cannot serialize the stream's first message");
    }
    if (!Push(std::move(first_message), max_queued)) return Cancelled("client went away");
    // Bands of about four pieces, on edges of the chunk grid (of shards when sharded).
    const auto bands =
        advanced ? std::vector<Band>{}
                 : PlanBands(sel, m->chunk_shape, ItemSize(m->dtype), {.target_bytes = 4 * piece});
    uint64_t offset = 0;
    IoOptions io{.pool = &service_->stream_decoder(), .cancelled = &cancelled_flag_};
    for (size_t b = 0; b < (advanced ? 1 : bands.size()); ++b) {
      const size_t band_bytes = advanced ? nbytes : bands[b].nbytes;
      // The band's bytes come out of the budget all streams share, and go back when its last
      // piece has been sent. Not zero-filled: the read writes every byte.
      ByteBudget& budget = service_->stream_budget();
      if (!budget.Acquire(band_bytes, *bands_held_ == 0, cancelled_flag_)) {
        return Cancelled("client went away");
      }
      ++*bands_held_;
      BufferCache& cache = service_->band_buffers();
      std::shared_ptr<uint8_t[]> buffer(
          cache.Take(band_bytes).release(),
          [&budget, &cache, band_bytes, held = bands_held_](uint8_t* p) {
            cache.Give(std::unique_ptr<uint8_t[]>(p), band_bytes);
            --*held;
            budget.Release(band_bytes);
          });
      ZARRD_RETURN_IF_ERROR(
          advanced ? array->ReadAdvanced(*advanced, buffer.get(), band_bytes, io)
                   : array->ReadResolved(bands[b].selection, buffer.get(), band_bytes, io));
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

  ZarrdService* service_;
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
  const Clock::time_point start_ = Clock::now();
  uint64_t bytes_sent_ = 0;
  // Bands of this stream alive (decoding, queued or being sent); shared with their deleters.
  std::shared_ptr<std::atomic<int>> bands_held_ = std::make_shared<std::atomic<int>>(0);
};

class SetItemStreamReactor : public grpc::ServerReadReactor<pb::SetItemRequest> {
 public:
  SetItemStreamReactor(ZarrdService* service, pb::SetItemResponse* resp)
      : service_(service), resp_(resp) {
    service_->BeginRequest();
    StartRead(&msg_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      service_->executor().Submit([this] {
        Status s = status_.ok() ? Commit() : status_;
        spdlog::debug("SetItemStream {}:{} -> {}", store_, path_, StatusCodeName(s.code()));
        service_->metrics().Request("SetItemStream", store_, s.code(), Seconds(start_));
        if (s.ok()) service_->metrics().BytesWritten("bytes", data_.size());
        Finish(wire::ToGrpcStatus(s));
      });
      return;
    }
    if (status_.ok()) status_ = Accept();
    StartRead(&msg_);
  }
  void OnCancel() override { cancelled_ = true; }
  void OnDone() override {
    service_->EndRequest();
    delete this;
  }

 private:
  Status Accept() {
    if (!array_) {
      if (service_->draining()) return {StatusCode::kUnavailable, "zarrd is shutting down"};
      store_ = msg_.store();
      path_ = msg_.path();
      ZARRD_RETURN_IF_ERROR(service_->FindStore(store_, true));
      ZARRD_ASSIGN_OR_RETURN(array_, service_->OpenArray(store_, path_));
      int64_t elements = 0;
      if (IsAdvanced(msg_.selection())) {
        ZARRD_ASSIGN_OR_RETURN(advanced_,
                               service_->ResolveAdvanced(*array_, path_, msg_.selection(), true));
        elements = advanced_->num_elements;
      } else {
        auto basic = BasicFromWire(msg_.selection(), array_->metadata()->shape,
                                   array_->metadata()->chunk_shape);
        if (!basic.ok()) return basic.status().WithContext("array '" + path_ + "'");
        ZARRD_ASSIGN_OR_RETURN(selection_, service_->ResolveInput(*array_, path_, *basic));
        elements = selection_.num_elements();
      }
      data_.resize(
          SaturatingMul(static_cast<uint64_t>(elements), ItemSize(array_->metadata()->dtype)));
    }
    const uint64_t offset = msg_.offset();
    const size_t n = msg_.data().size();
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
    if (!array_) return InvalidArgument("SetItemStream: no message named the array");
    if (received_ != data_.size()) {
      return InvalidArgument("SetItemStream to array '" + path_ + "': received " +
                             std::to_string(received_) + " bytes, the selection needs " +
                             std::to_string(data_.size()) + "; nothing was written");
    }
    IoOptions io{.pool = nullptr, .cancelled = &cancelled_};
    HostSource source(data_.data(), data_.size(), ItemSize(array_->metadata()->dtype));
    ZARRD_RETURN_IF_ERROR(advanced_
                              ? array_->WriteAdvanced(*advanced_, data_.data(), data_.size(), io)
                              : array_->WriteFromSource(selection_, source, io));
    resp_->set_nbytes_written(data_.size());
    return OkStatus();
  }

  ZarrdService* service_;
  pb::SetItemResponse* resp_;
  pb::SetItemRequest msg_;
  Status status_;
  std::string store_, path_;
  std::shared_ptr<Array> array_;
  ResolvedSelection selection_;
  std::optional<ResolvedAdvanced> advanced_;
  std::vector<uint8_t> data_;
  uint64_t received_ = 0;
  std::atomic<bool> cancelled_{false};
  const Clock::time_point start_ = Clock::now();
};

// Writes `nbytes` in pieces, one write in flight as GetItemStream does: the transport alone.
// The pieces are slices over one hot piece of zeros, or over consecutive parts of a buffer as
// large as the stream (`distinct`).
class StreamBytesReactor : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  StreamBytesReactor(ZarrdService* service, grpc::CallbackServerContext* context,
                     const grpc::ByteBuffer* raw)
      : service_(service) {
    service_->BeginRequest();
    const ServerConfig& config = service_->config();
    if (!config.enable_stream_bytes) {
      Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                          "StreamBytes is a benchmark RPC, off unless the config sets "
                          "\"enable_stream_bytes\": true"));
      return;
    }
    grpc::ByteBuffer copy(*raw);
    pb::StreamBytesRequest req;
    if (!grpc::SerializationTraits<pb::StreamBytesRequest>::Deserialize(&copy, &req).ok()) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "StreamBytes: bad request"));
      return;
    }
    const uint64_t cap = std::min(config.stream_bytes_max_bytes, config.max_result_bytes);
    if (req.nbytes() > cap) {
      Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "StreamBytes: " + std::to_string(req.nbytes()) +
                              " bytes exceed stream_bytes_max_bytes (or max_result_bytes), " +
                              std::to_string(cap)));
      return;
    }
    remaining_ = req.nbytes();
    piece_ = req.piece_bytes() ? std::min<uint32_t>(req.piece_bytes(), 64u << 20)
                               : service_->config().stream_piece_bytes;
    distinct_ = req.distinct();
    const uint64_t source_bytes = distinct_ ? remaining_ : std::min<uint64_t>(piece_, remaining_);
    if (distinct_) {
      // Built on gRPC's thread: it stops when the client cancels or its deadline passes.
      source_ = service_->StreamBytesSource(source_bytes, [context] {
        return context->IsCancelled() || context->deadline() < std::chrono::system_clock::now();
      });
      if (!source_) {
        Finish(
            grpc::Status(grpc::StatusCode::CANCELLED,
                         "StreamBytes: cancelled or past its deadline while its buffer was built"));
        return;
      }
    } else {
      source_.reset(new uint8_t[source_bytes]());
    }
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::CANCELLED);
      return;
    }
    Next();
  }
  void OnDone() override {
    service_->EndRequest();
    delete this;
  }

 private:
  void Next() {
    if (remaining_ == 0) {
      Finish(grpc::Status::OK);
      return;
    }
    const uint64_t n = std::min<uint64_t>(piece_, remaining_);
    msg_ = PieceMessage(source_, distinct_ ? sent_ : 0, n, sent_);
    sent_ += n;
    remaining_ -= n;
    StartWrite(&msg_);
  }

  ZarrdService* service_;
  uint64_t remaining_ = 0, sent_ = 0;
  uint32_t piece_ = 0;
  bool distinct_ = false;
  std::shared_ptr<uint8_t[]> source_;
  grpc::ByteBuffer msg_;
};

}  // namespace

grpc::ServerWriteReactor<grpc::ByteBuffer>* ZarrdService::StreamBytes(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* req) {
  return new StreamBytesReactor(this, context, req);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* ZarrdService::GetItemStream(
    grpc::CallbackServerContext*, const grpc::ByteBuffer* req) {
  return new GetItemStreamReactor(this, req);
}

grpc::ServerReadReactor<pb::SetItemRequest>* ZarrdService::SetItemStream(
    grpc::CallbackServerContext*, pb::SetItemResponse* resp) {
  return new SetItemStreamReactor(this, resp);
}

}  // namespace zarrd::server
