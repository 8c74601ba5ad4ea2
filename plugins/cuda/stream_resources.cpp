#include "stream_resources.h"

#include <string>

#include "cuda_check.h"
#include "library_errors.h"

namespace loom::cuda {

LOOM_Status* StreamResources::synchronize() {
  if (!blocking_waits_) return status_of(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  if (LOOM_Status* s = status_of(cudaSetDevice(device_), "cudaSetDevice")) return s;
  std::lock_guard<std::mutex> lock(sync_mutex_);
  if (sync_event_ == nullptr) {
    const cudaError_t e = cudaEventCreateWithFlags(&sync_event_, cudaEventBlockingSync | cudaEventDisableTiming);
    if (e != cudaSuccess) {
      sync_event_ = nullptr;
      return status_of(e, "cudaEventCreateWithFlags (stream synchronize)");
    }
  }
  if (LOOM_Status* s = status_of(cudaEventRecord(sync_event_, stream_), "cudaEventRecord (stream synchronize)"))
    return s;
  // Waiting under the lock: a concurrent synchronize waits here first and
  // then for its own record, never for an event re-recorded past its work.
  return status_of(cudaEventSynchronize(sync_event_), "cudaEventSynchronize (stream synchronize)");
}

StreamResources::~StreamResources() {
  cudaSetDevice(device_);
  if (blas_ != nullptr) cublasDestroy(blas_);
  if (blas_lt_ != nullptr) cublasLtDestroy(blas_lt_);
  graph_convs_.clear();  // plans built on dnn_ go first
  if (dnn_ != nullptr) cudnnDestroy(dnn_);
  if (sync_event_ != nullptr) cudaEventDestroy(sync_event_);
  for (void* p : scratch_)
    if (p != nullptr) cudaFreeAsync(p, stream_);
}

cublasHandle_t StreamResources::blas() {
  if (blas_ == nullptr) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    check_blas(cublasCreate(&blas_), "cublasCreate");
    check_blas(cublasSetStream(blas_, stream_), "cublasSetStream");
    // Scalars (alpha, beta) are passed from the host.
    check_blas(cublasSetPointerMode(blas_, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  }
  return blas_;
}

cublasLtHandle_t StreamResources::blas_lt() {
  if (blas_lt_ == nullptr) check_blas(cublasLtCreate(&blas_lt_), "cublasLtCreate");
  return blas_lt_;
}

cudnnHandle_t StreamResources::dnn() {
  if (dnn_ == nullptr) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    check_dnn(cudnnCreate(&dnn_), "cudnnCreate");
    check_dnn(cudnnSetStream(dnn_, stream_), "cudnnSetStream");
  }
  return dnn_;
}

void* StreamResources::scratch(size_t bytes, int slot) {
  if (ctx_ == nullptr || !LOOM_HAS_FIELD(&sdk::host(), LOOM_HostApi, kernel_scratch)) return own_scratch(bytes, slot);
  return sdk::KernelContext(ctx_).scratch<unsigned char>(static_cast<int64_t>(bytes), "cuda scratch");
}

void* StreamResources::own_scratch(size_t bytes, int slot) {
  if (slot < 0 || slot >= kScratchSlots) throw sdk::Error("cuda: scratch slot out of range", LOOM_STATUS_FAIL);
  const size_t i = static_cast<size_t>(slot);
  if (bytes <= scratch_bytes_[i] && scratch_[i] != nullptr) return scratch_[i];
  if (scratch_[i] != nullptr) check(cudaFreeAsync(scratch_[i], stream_), "cudaFreeAsync (scratch)");
  scratch_[i] = nullptr;
  scratch_bytes_[i] = 0;
  // Round up so slowly growing requests do not reallocate every time.
  const size_t rounded = bytes < 256 ? 256 : ((bytes + (1u << 20) - 1) >> 20) << 20;
  void* p = nullptr;
  const cudaError_t e = cudaMallocAsync(&p, rounded, stream_);
  if (e != cudaSuccess)
    throw sdk::Error("cuda: cannot allocate " + std::to_string(rounded) + " bytes of scratch: " + cudaGetErrorString(e),
                     LOOM_STATUS_OUT_OF_MEMORY);
  scratch_[i] = p;
  scratch_bytes_[i] = rounded;
  return p;
}

void StreamResources::release_own_scratch(int slot) {
  if (slot < 0 || slot >= kScratchSlots) throw sdk::Error("cuda: scratch slot out of range", LOOM_STATUS_FAIL);
  const size_t i = static_cast<size_t>(slot);
  if (scratch_[i] == nullptr) return;
  check(cudaFreeAsync(scratch_[i], stream_), "cudaFreeAsync (scratch)");
  scratch_[i] = nullptr;
  scratch_bytes_[i] = 0;
}

StreamResources& stream_resources(const sdk::KernelContext& ctx) {
  LOOM_Stream* s = ctx.stream();
  if (s == nullptr || s->state == nullptr)
    throw sdk::Error("cuda: the host gave this kernel no stream (a host older than ABI 0.2?)", LOOM_STATUS_FAIL);
  auto& res = *static_cast<StreamResources*>(s->state);
  res.bind(ctx.raw());
  return res;
}

}  // namespace loom::cuda
