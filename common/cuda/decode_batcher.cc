#include "common/cuda/decode_batcher.h"

#include <utility>

#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {
namespace {

Status DecodeFailure(decode::DecodeError e, GpuCodec codec) {
  const std::string what = std::string(GpuCodecName(codec)) + " (decoded on the GPU): ";
  if (e == EncodedBatch::kNotRun) return Internal(what + "the decode kernel did not run");
  if (e == decode::DecodeError::kUnsupported) {
    return Unimplemented(what + decode::DecodeErrorName(e) +
                         "; gpu_decode \"never\" decodes it on the CPU");
  }
  return DataLoss(what + decode::DecodeErrorName(e));
}

}  // namespace

DecodeBatcher::~DecodeBatcher() {
  if (records_ != nullptr || batch_.open()) (void)Finish();
}

void DecodeBatcher::Start(size_t num_chunks) {
  num_chunks_ = num_chunks;
  out_of_memory_ = false;
}

Status DecodeBatcher::Add(const Placement& p, ByteView encoded, ChunkSink::EncodedChunk chunk) {
  return AddChunk(p, encoded, nullptr, std::move(chunk));
}

bool DecodeBatcher::WouldWait() const {
  // Not under mutex_: a thread opening a batch holds it while it waits for a slot.
  return !accepting_.load(std::memory_order_relaxed) && !staging_.batch_pool().HasIdleSlot();
}

Status DecodeBatcher::AddDevice(const Placement& p, const DeviceValue& encoded,
                                ChunkSink::EncodedChunk chunk) {
  return AddChunk(p, {static_cast<const uint8_t*>(encoded.data), encoded.size}, &encoded,
                  std::move(chunk));
}

Status DecodeBatcher::AddChunk(const Placement& p, ByteView encoded, const DeviceValue* device,
                               ChunkSink::EncodedChunk chunk) {
  // A chunk in GPU memory takes no room among the batch's uploaded bytes.
  const size_t upload_bytes = device ? 0 : encoded.size();
  std::unique_lock lock(mutex_);
  // A batch of this read failed to open for want of memory: the next would too.
  if (out_of_memory_) return ResourceExhausted("no GPU memory for a decode batch of this read");
  for (;;) {
    if (batch_.open() && !closed_ &&
        batch_.Takes(chunk.codec, chunk.swap_unit, chunk.crc32c, upload_bytes,
                     chunk.decoded_bytes)) {
      break;
    }
    if (batch_.open() && !closed_) {
      ZARRD_RETURN_IF_ERROR(Close());
    } else if (batch_.open()) {
      // Not `!batch_.open()`: another thread may open the next batch first.
      launched_.wait(lock, [&] { return !closed_; });
    } else {
      ZARRD_RETURN_IF_ERROR(OpenBatch(chunk, upload_bytes));
    }
  }
  ZARRD_ASSIGN_OR_RETURN(
      const size_t i,
      batch_.Reserve(encoded.size(), device ? encoded.data() : nullptr, p, out_, elem_size_));
  const size_t record = num_records_++;
  wheres_[record] = std::move(chunk.where);
  codecs_[record] = chunk.codec;
  reinterpret_cast<decode::DecodeTask*>(records_)[record].error = EncodedBatch::kNotRun;
  if (device) {
    held_.push_back(device->keepalive);
    if (batch_.full()) return Close();
    return OkStatus();
  }
  ++writers_;
  if (batch_.full()) {
    closed_ = true;
    accepting_ = false;
  }
  lock.unlock();
  batch_.Write(i, encoded);
  lock.lock();
  return --writers_ == 0 && closed_ ? Launch() : OkStatus();
}

Status DecodeBatcher::OpenBatch(const ChunkSink::EncodedChunk& chunk, size_t upload_bytes) {
  if (num_records_ >= num_chunks_) {
    return Internal("a read handed over more encoded chunks than it has");
  }
  Status s;
  if (records_ == nullptr) {
    records_bytes_ = std::max<size_t>(num_chunks_, 1) * sizeof(decode::DecodeTask);
    auto records = staging_.AcquireRecords(records_bytes_);
    s = records.status();
    if (s.ok()) {
      records_ = *records;
      wheres_.assign(num_chunks_, std::string());
      codecs_.assign(num_chunks_, GpuCodec::kZstd);
    }
  }
  if (s.ok()) {
    s = batch_.Open(staging_.batch_pool(), chunk.codec, chunk.swap_unit, chunk.crc32c, upload_bytes,
                    chunk.decoded_bytes, num_chunks_ - num_records_);
  }
  if (s.code() == StatusCode::kResourceExhausted) out_of_memory_ = true;
  if (!s.ok()) return s;
  closed_ = false;
  accepting_ = true;
  first_record_ = num_records_;
  return OkStatus();
}

Status DecodeBatcher::Close() {
  closed_ = true;
  accepting_ = false;
  return writers_ == 0 ? Launch() : OkStatus();
}

Status DecodeBatcher::Launch() {
  auto* records = reinterpret_cast<decode::DecodeTask*>(records_) + first_record_;
  StagingSlot* used = nullptr;
  Status s = batch_.Flush(staging_.batch_pool(), records, &used);
  if (used != nullptr) used_.insert(used);
  closed_ = false;
  launched_.notify_all();
  return s;
}

Status DecodeBatcher::CheckDecoded() const {
  const auto* records = reinterpret_cast<const decode::DecodeTask*>(records_);
  Status first;
  size_t failed = 0;
  for (size_t i = 0; i < num_records_; ++i) {
    decode::DecodeError e = records[i].error;
    if (e == decode::DecodeError::kOk && records[i].written != records[i].dst_size) {
      e = decode::DecodeError::kOutputShort;
    }
    if (e == decode::DecodeError::kOk) continue;
    if (failed++ == 0) first = DecodeFailure(e, codecs_[i]).WithContext(wheres_[i]);
  }
  if (failed > 1) {
    first = Status(first.code(), first.message() + " (and " + std::to_string(failed - 1) +
                                     " more chunks of this read)");
  }
  return first;
}

Status DecodeBatcher::Finish() {
  std::unique_lock lock(mutex_);
  // Every Add has returned: a batch still open has no writers.
  Status status = batch_.open() ? Close() : OkStatus();
  for (StagingSlot* slot : used_) {
    Status s = CudaStatus(cudaEventSynchronize(slot->done), "GPU decoding");
    if (status.ok()) status = s;
  }
  used_.clear();
  if (records_ != nullptr) {
    Status checked = CheckDecoded();
    if (status.ok()) status = checked;
    staging_.ReleaseRecords(records_, records_bytes_);
    records_ = nullptr;
  }
  num_records_ = 0;
  wheres_.clear();
  codecs_.clear();
  held_.clear();
  return status;
}

Status PrewarmBatchSlots(StagingPool& staging) {
  constexpr size_t kChunk = size_t{1} << 20;
  StagingPool& slots = staging.batch_pool();
  Status status;
  // Blosc batches need the most device scratch, zstd ones the most zstd scratch: each round
  // holds every slot at once, so that each is made or grown.
  for (GpuCodec codec : {GpuCodec::kBloscZstd, GpuCodec::kZstd}) {
    std::vector<EncodedBatch> batches(slots.max_slots());
    for (EncodedBatch& b : batches) {
      if (status.ok()) {
        status = b.Open(slots, codec, 1, false, kChunk, kChunk, EncodedBatch::kMaxChunks);
      }
    }
    for (EncodedBatch& b : batches) {
      StagingSlot* used = nullptr;
      Status released = b.Flush(slots, nullptr, &used);  // empty: gives the slot back
      if (status.ok()) status = released;
    }
  }
  return status;
}

}  // namespace zarrd::cuda
