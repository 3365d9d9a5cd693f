#include "common/cuda/device_sink.h"

#include <algorithm>
#include <utility>

#include "common/cuda/cuda_status.h"

namespace zarrd::cuda {

void DeviceSink::Start(size_t num_chunks) {
  num_chunks_ = num_chunks;
  decoder_.Start(num_chunks);
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

Status DeviceSink::CommitEncoded(const Placement& p, ByteView encoded, EncodedChunk chunk) {
  // The batcher may wait for a batch slot: this thread must hold no upload slot meanwhile.
  ZARRD_RETURN_IF_ERROR(Flush(ThreadGroup()));
  return decoder_.Add(p, encoded, std::move(chunk));
}

Status DeviceSink::CommitEncodedDevice(const Placement& p, const DeviceValue& encoded,
                                       EncodedChunk chunk) {
  ZARRD_RETURN_IF_ERROR(Flush(ThreadGroup()));
  return decoder_.AddDevice(p, encoded, std::move(chunk));
}

DeviceSink::~DeviceSink() {
  for (StagingSlot* slot : used_) cudaEventSynchronize(slot->done);
}

Result<ChunkSink::Buffer> DeviceSink::Begin(const Placement& p, size_t chunk_bytes) {
  Group& g = ThreadGroup();
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
  return Flush(*g);
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
  Status status = decoder_.Finish();
  if (status.ok()) status = launch_status_;
  {
    // Groups of threads that did not leave (a read not run by ThreadPool::ParallelFor).
    std::lock_guard lock(groups_mutex_);
    for (auto& [thread, g] : groups_) {
      Status s = Flush(*g);
      if (status.ok()) status = s;
    }
    groups_.clear();
  }
  // A slot's `done` may be recorded again by a later user of the slot, after more work on the
  // same stream: waiting for that covers this result's work too.
  for (StagingSlot* slot : used_) {
    Status s = join_ ? CudaStatus(cudaStreamWaitEvent(join_, slot->done, 0), "device result")
                     : CudaStatus(cudaEventSynchronize(slot->done), "device result");
    if (status.ok()) status = s;
  }
  used_.clear();
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
