#include "common/cuda/device_sink.h"

#include <algorithm>
#include <utility>

#include "common/cuda/cuda_status.h"
#include "common/decode/host_device.h"

namespace zarrd::cuda {

void DeviceSink::Start(size_t num_chunks) {
  num_chunks_ = num_chunks;
  deferred_.resize(num_chunks);
  keepalive_.resize(num_chunks);
  num_deferred_ = 0;
  const size_t batches = (num_chunks + kBatch - 1) / kBatch;
  batch_filled_ = std::make_unique<std::atomic<uint32_t>[]>(batches);
  batch_launched_ = std::make_unique<std::atomic<bool>[]>(batches);
  for (size_t b = 0; b < batches; ++b) {
    batch_filled_[b] = 0;
    batch_launched_[b] = false;
  }
}

size_t DeviceSink::BatchSize(size_t b) const { return std::min(kBatch, num_chunks_ - b * kBatch); }

void DeviceSink::LaunchBatch(size_t b) {
  if (batch_launched_[b].exchange(true)) return;
  const size_t first = b * kBatch;
  const size_t count = std::min(BatchSize(b), num_deferred_.load() - first);
  auto slot = staging_.Acquire(count * sizeof(StridedCopyDesc));
  Status status = slot.status();
  if (slot.ok()) {
    status = LaunchStridedCopies(deferred_.data() + first, count, (*slot)->pinned, (*slot)->scratch,
                                 (*slot)->stream);
    Status released = staging_.Release(*slot, true);
    if (status.ok()) status = released;
  }
  std::lock_guard lock(mutex_);
  if (slot.ok()) used_.insert(*slot);
  if (launch_status_.ok()) launch_status_ = status;
}

DeviceSink::Group& DeviceSink::ThreadGroup() {
  std::lock_guard lock(groups_mutex_);
  auto& g = groups_[std::this_thread::get_id()];
  if (!g) g = std::make_unique<Group>();
  return *g;
}

Status DeviceSink::Flush(Group& g) {
  StagingSlot* slot = std::exchange(g.slot, nullptr);
  if (slot == nullptr) return OkStatus();
  const size_t count = std::exchange(g.count, 0);
  Status s;
  if (count > 0) {
    s = CudaStatus(cudaMemcpyAsync(slot->scratch, slot->pinned, count * g.chunk_bytes,
                                   cudaMemcpyHostToDevice, slot->stream),
                   "chunk upload");
    for (size_t i = 0; i < count && s.ok(); ++i) s = LaunchStridedCopy(g.descs[i], slot->stream);
    std::lock_guard lock(mutex_);
    used_.insert(slot);
  }
  Status released = staging_.Release(slot, count > 0);
  return s.ok() ? released : s;
}

Status DeviceSink::FlushEncoded(Group& g) {
  if (!g.encoded.open()) return OkStatus();
  const size_t n = g.encoded.count();
  const size_t base = num_records_.fetch_add(n);
  if (base + n > wheres_.size()) {
    StagingSlot* unused = nullptr;
    (void)g.encoded.Flush(staging_, nullptr, &unused);
    return Internal("a read handed over more encoded chunks than it has");
  }
  auto* records = reinterpret_cast<decode::DecodeTask*>(records_) + base;
  for (size_t i = 0; i < n; ++i) {
    wheres_[base + i] = std::move(g.wheres[i]);
    codecs_[base + i] = g.codecs[i];
    records[i].error = EncodedBatch::kNotRun;
  }
  g.wheres.clear();
  g.codecs.clear();
  StagingSlot* used = nullptr;
  Status s = g.encoded.Flush(staging_, records, &used);
  if (used != nullptr) {
    std::lock_guard lock(mutex_);
    used_.insert(used);
  }
  return s;
}

Status DeviceSink::FlushBoth(Group& g) {
  Status plain = Flush(g);
  Status encoded = FlushEncoded(g);
  return plain.ok() ? encoded : plain;
}

Status DeviceSink::AcquireRecords() {
  std::lock_guard lock(records_mutex_);
  if (records_ != nullptr) return OkStatus();
  records_bytes_ = std::max<size_t>(num_chunks_, 1) * sizeof(decode::DecodeTask);
  ZARRD_ASSIGN_OR_RETURN(records_, staging_.AcquireRecords(records_bytes_));
  wheres_.assign(num_chunks_, std::string());
  codecs_.assign(num_chunks_, GpuCodec::kZstd);
  return OkStatus();
}

Status DeviceSink::CommitEncoded(const Placement& p, ByteView encoded, EncodedChunk chunk) {
  ZARRD_RETURN_IF_ERROR(AcquireRecords());
  Group& g = ThreadGroup();
  ZARRD_RETURN_IF_ERROR(Flush(g));
  if (g.encoded.open() &&
      !g.encoded.Takes(chunk.codec, chunk.swap_unit, encoded.size(), chunk.decoded_bytes)) {
    ZARRD_RETURN_IF_ERROR(FlushEncoded(g));
  }
  if (!g.encoded.open()) {
    ZARRD_RETURN_IF_ERROR(g.encoded.Open(staging_, chunk.codec, chunk.swap_unit, encoded.size(),
                                         chunk.decoded_bytes));
  }
  ZARRD_RETURN_IF_ERROR(g.encoded.Add(encoded, p, out_, elem_size_));
  g.wheres.push_back(std::move(chunk.where));
  g.codecs.push_back(chunk.codec);
  return g.encoded.full() ? FlushEncoded(g) : OkStatus();
}

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

Status DeviceSink::CheckDecoded() {
  const auto* records = reinterpret_cast<const decode::DecodeTask*>(records_);
  const size_t n = num_records_.load();
  Status first;
  size_t failed = 0;
  for (size_t i = 0; i < n; ++i) {
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

void DeviceSink::ReleaseRecords() {
  staging_.ReleaseRecords(records_, records_bytes_);
  records_ = nullptr;
  num_records_ = 0;
  wheres_.clear();
  codecs_.clear();
}

DeviceSink::~DeviceSink() {
  if (records_ == nullptr) return;
  for (StagingSlot* slot : used_) cudaEventSynchronize(slot->done);
  ReleaseRecords();
}

Result<ChunkSink::Buffer> DeviceSink::Begin(const Placement& p, size_t chunk_bytes) {
  Group& g = ThreadGroup();
  ZARRD_RETURN_IF_ERROR(FlushEncoded(g));
  if (g.slot != nullptr && g.chunk_bytes != chunk_bytes) ZARRD_RETURN_IF_ERROR(Flush(g));
  if (g.slot == nullptr) {
    const size_t capacity =
        std::clamp<size_t>(kGroupBytes / std::max<size_t>(chunk_bytes, 1), 1, kMaxGroup);
    ZARRD_ASSIGN_OR_RETURN(g.slot, staging_.Acquire(capacity * chunk_bytes));
    g.chunk_bytes = chunk_bytes;
    g.capacity = capacity;
    g.count = 0;
  }
  return Buffer{g.slot->pinned + g.count * chunk_bytes, &g};
}

Status DeviceSink::Commit(const Placement& p, const Buffer& buffer) {
  Group& g = *static_cast<Group*>(buffer.token);
  ZARRD_ASSIGN_OR_RETURN(
      g.descs[g.count],
      MakeCopyDesc(g.slot->scratch + g.count * g.chunk_bytes + p.chunk_offset,
                   p.chunk_strides.data(), out_ + p.result_offset, p.result_strides.data(),
                   p.counts.data(), p.counts.size(), elem_size_));
  return ++g.count == g.capacity ? Flush(g) : OkStatus();
}

Status DeviceSink::LeaveThread() {
  std::unique_ptr<Group> g;
  {
    std::lock_guard lock(groups_mutex_);
    auto it = groups_.find(std::this_thread::get_id());
    if (it == groups_.end()) return OkStatus();
    g = std::move(it->second);
    groups_.erase(it);
  }
  return FlushBoth(*g);
}

// The chunk's place in its group is handed out again by the next Begin.
void DeviceSink::Abandon(const Buffer&) {}

void DeviceSink::Defer(const StridedCopyDesc& desc, std::shared_ptr<const void> keepalive) {
  const size_t i = num_deferred_.fetch_add(1, std::memory_order_relaxed);
  deferred_[i] = desc;
  keepalive_[i] = std::move(keepalive);
  const size_t b = i / kBatch;
  if (batch_filled_[b].fetch_add(1, std::memory_order_acq_rel) + 1 == BatchSize(b)) {
    // The launch waits for a staging slot: this thread must not hold one meanwhile, or threads
    // that each hold a group's slot could all wait here for one another's.
    Status left = LeaveThread();
    if (!left.ok()) {
      std::lock_guard lock(mutex_);
      if (launch_status_.ok()) launch_status_ = left;
    }
    LaunchBatch(b);
  }
}

Status DeviceSink::Fill(const Placement& p, const uint8_t* fill_value, size_t elem_size) {
  ZARRD_ASSIGN_OR_RETURN(
      auto desc, MakeFillDesc(out_ + p.result_offset, p.result_strides.data(), p.counts.data(),
                              p.counts.size(), fill_value, elem_size));
  Defer(desc, nullptr);
  return OkStatus();
}

Status DeviceSink::CommitDevice(const Placement& p, const DeviceValue& value) {
  ZARRD_ASSIGN_OR_RETURN(
      auto desc,
      MakeCopyDesc(static_cast<const uint8_t*>(value.data) + p.chunk_offset, p.chunk_strides.data(),
                   out_ + p.result_offset, p.result_strides.data(), p.counts.data(),
                   p.counts.size(), elem_size_));
  Defer(desc, value.keepalive);
  return OkStatus();
}

Status DeviceSink::Finish() {
  // Batches that did not fill (chunks decoded on the host defer nothing) launch now.
  const size_t deferred = num_deferred_.load();
  for (size_t b = 0; b * kBatch < deferred; ++b) LaunchBatch(b);
  Status status = launch_status_;
  {
    // Groups of threads that did not leave (a read not run by ThreadPool::ParallelFor).
    std::lock_guard lock(groups_mutex_);
    for (auto& [thread, g] : groups_) {
      Status s = FlushBoth(*g);
      if (status.ok()) status = s;
    }
    groups_.clear();
  }
  // A slot's `done` may be recorded again by a later user of the slot, after more work on the
  // same stream: waiting for that covers this result's work too. The decode results of encoded
  // chunks are read here, so their work is waited for also with a join stream.
  const bool decoded = records_ != nullptr;
  for (StagingSlot* slot : used_) {
    Status s = join_ && !decoded
                   ? CudaStatus(cudaStreamWaitEvent(join_, slot->done, 0), "device result")
                   : CudaStatus(cudaEventSynchronize(slot->done), "device result");
    if (status.ok()) status = s;
  }
  used_.clear();
  if (decoded) {
    Status checked = CheckDecoded();
    if (status.ok()) status = checked;
    ReleaseRecords();
  }
  deferred_.clear();
  if (!join_) keepalive_.clear();  // with a join stream, TakeHeld hands them on
  launch_status_ = OkStatus();
  return status;
}

std::vector<std::shared_ptr<const void>> DeviceSink::TakeHeld() {
  std::erase(keepalive_, nullptr);  // fills hold nothing
  return std::move(keepalive_);
}

}  // namespace zarrd::cuda
