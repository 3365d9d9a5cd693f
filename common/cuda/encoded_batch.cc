#include "common/cuda/encoded_batch.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/cuda/blosc_kernel.h"
#include "common/cuda/byte_swap.h"
#include "common/cuda/crc32c_kernel.h"
#include "common/cuda/cuda_status.h"
#include "common/cuda/deflate_kernel.h"
#include "common/cuda/zstd_kernel.h"

namespace zarrd::cuda {
namespace {

size_t Align(size_t n, size_t to = 256) { return (n + to - 1) / to * to; }

}  // namespace

bool EncodedBatch::Takes(GpuCodec codec, uint32_t swap_unit, bool crc32c, size_t encoded_bytes,
                         size_t decoded_bytes) const {
  return open() && codec == codec_ && swap_unit == swap_unit_ && crc32c == crc32c_ &&
         decoded_bytes == decoded_bytes_ && count_ < capacity_ &&
         encoded_used_ + Align(encoded_bytes, 16) <= encoded_cap_;
}

Status EncodedBatch::Open(StagingPool& staging, GpuCodec codec, uint32_t swap_unit, bool crc32c,
                          size_t encoded_bytes, size_t decoded_bytes, size_t max_chunks) {
  codec_ = codec;
  swap_unit_ = swap_unit;
  crc32c_ = crc32c;
  decoded_bytes_ = decoded_bytes;
  capacity_ = std::clamp<size_t>(kDecodedBytes / std::max<size_t>(decoded_stride(), 1), 1,
                                 std::clamp<size_t>(max_chunks, 1, kMaxChunks));
  tasks_at_ = Align(capacity_ * sizeof(StridedCopyDesc));
  offsets_at_ = tasks_at_ + Align(capacity_ * sizeof(decode::DecodeTask));
  encoded_at_ = offsets_at_ + Align(capacity_ * sizeof(uint64_t));
  // Encoded chunks rarely pass their decoded size by much (stored blocks, headers); a batch
  // whose chunks do closes early (Takes).
  encoded_cap_ = std::max(capacity_ * Align(decoded_stride() + decoded_stride() / 16 + 64, 16),
                          Align(encoded_bytes, 16));
  decoded_at_ = encoded_at_ + Align(encoded_cap_);
  scratch_at_ = decoded_at_ + capacity_ * decoded_stride();
  const bool blosc = codec == GpuCodec::kBlosc || codec == GpuCodec::kBloscZstd;
  const size_t device_bytes = scratch_at_ + (blosc ? capacity_ * decoded_stride() : 0);
  ZARRD_ASSIGN_OR_RETURN(slot_, staging.Acquire(encoded_at_ + encoded_cap_, device_bytes));
  // The zstd kernels' scratch, or the blosc kernel's zstd workspaces.
  const uint64_t zstd_bytes = codec == GpuCodec::kZstd
                                  ? ZstdScratchBytes(capacity_, capacity_ * decoded_bytes_)
                              : codec == GpuCodec::kBloscZstd ? BloscZstdWorkspaceBytes()
                                                              : 0;
  if (slot_->zstd_scratch.bytes < zstd_bytes) {
    if (slot_->zstd_scratch.data) FreeZstdScratch(slot_->zstd_scratch);
    slot_->zstd_scratch = ZstdScratch();
    auto scratch = AllocateZstdScratch(zstd_bytes);
    if (!scratch.ok()) {
      (void)staging.Release(std::exchange(slot_, nullptr), false);
      return scratch.status();
    }
    slot_->zstd_scratch = *scratch;
  }
  count_ = 0;
  encoded_used_ = 0;
  encoded_offsets_.resize(capacity_);
  tasks_.resize(capacity_);
  descs_.resize(capacity_);
  return OkStatus();
}

Result<size_t> EncodedBatch::Reserve(size_t encoded_bytes, const uint8_t* device_src,
                                     const Placement& p, uint8_t* out, size_t elem_size) {
  const size_t i = count_;
  uint8_t* decoded = slot_->scratch + decoded_at_ + i * decoded_stride();
  ZARRD_ASSIGN_OR_RETURN(descs_[i], MakeCopyDesc(decoded + p.chunk_offset, p.chunk_strides.data(),
                                                 out + p.result_offset, p.result_strides.data(),
                                                 p.counts.data(), p.counts.size(), elem_size));
  decode::DecodeTask& task = tasks_[i];
  task = decode::DecodeTask();
  task.src = device_src ? device_src : slot_->scratch + encoded_at_ + encoded_used_;
  task.src_size = encoded_bytes - (crc32c_ ? 4 : 0);  // GpuCodecFor took none shorter
  task.dst = decoded;
  task.dst_size = decoded_bytes_;
  task.error = kNotRun;
  encoded_offsets_[i] = encoded_used_;
  if (device_src == nullptr) encoded_used_ += Align(encoded_bytes, 16);
  ++count_;
  return i;
}

void EncodedBatch::Write(size_t i, ByteView encoded) {
  if (encoded.empty()) return;
  std::memcpy(slot_->pinned + encoded_at_ + encoded_offsets_[i], encoded.data(), encoded.size());
}

Status EncodedBatch::Flush(StagingPool& staging, decode::DecodeTask* records, StagingSlot** used) {
  StagingSlot* slot = std::exchange(slot_, nullptr);
  const size_t n = std::exchange(count_, 0);
  *used = n > 0 ? slot : nullptr;
  if (slot == nullptr) return OkStatus();
  if (n == 0) return staging.Release(slot, false);
  std::memcpy(slot->pinned + tasks_at_, tasks_.data(), n * sizeof(decode::DecodeTask));
  auto* offsets = reinterpret_cast<uint64_t*>(slot->pinned + offsets_at_);
  for (size_t i = 0; i < n; ++i) offsets[i] = i * decoded_stride();
  auto* d_tasks = reinterpret_cast<decode::DecodeTask*>(slot->scratch + tasks_at_);
  cudaStream_t stream = slot->stream;
  Status s = CudaStatus(
      cudaMemcpyAsync(slot->scratch + tasks_at_, slot->pinned + tasks_at_,
                      encoded_at_ + encoded_used_ - tasks_at_, cudaMemcpyHostToDevice, stream),
      "encoded chunks upload");
  if (s.ok()) {
    switch (codec_) {
      case GpuCodec::kZstd:
        s = LaunchZstdDecode(d_tasks, static_cast<int>(n), slot->zstd_scratch, stream);
        break;
      case GpuCodec::kBlosc:
      case GpuCodec::kBloscZstd:
        s = LaunchBloscDecode(d_tasks, static_cast<uint32_t>(n), slot->scratch + scratch_at_,
                              reinterpret_cast<const uint64_t*>(slot->scratch + offsets_at_),
                              codec_ == GpuCodec::kBloscZstd ? slot->zstd_scratch.data : nullptr,
                              stream);
        break;
      case GpuCodec::kGzip:
      case GpuCodec::kZlib:
        s = LaunchDeflateDecode(
            d_tasks, static_cast<uint32_t>(n),
            codec_ == GpuCodec::kGzip ? DeflateWrapper::kGzip : DeflateWrapper::kZlib, stream);
        break;
    }
  }
  if (s.ok() && crc32c_) s = LaunchCrc32cCheck(d_tasks, static_cast<uint32_t>(n), stream);
  if (s.ok() && swap_unit_ > 1) {
    s = LaunchByteSwap(slot->scratch + decoded_at_, n * decoded_stride(), swap_unit_, stream);
  }
  if (s.ok()) s = LaunchStridedCopies(descs_.data(), n, slot->pinned, slot->scratch, stream);
  if (s.ok() && records != nullptr) {
    s = CudaStatus(cudaMemcpyAsync(records, d_tasks, n * sizeof(decode::DecodeTask),
                                   cudaMemcpyDeviceToHost, stream),
                   "decode results download");
  }
  encoded_used_ = 0;
  Status released = staging.Release(slot, true);
  return s.ok() ? released : s;
}

}  // namespace zarrd::cuda
