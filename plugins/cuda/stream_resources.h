// What the CUDA EP keeps per stream: the library handles bound to it
// (cuBLAS, cuBLASLt and cuDNN handles must not be shared between threads
// running at once, and the host gives each run in flight its own stream)
// and stream-ordered scratch memory. Created empty with the stream; each
// handle is made on first use and destroyed with the stream.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <cstddef>

#include "loom/sdk.h"

namespace loom::cuda {

class StreamResources {
 public:
  StreamResources(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  ~StreamResources();
  StreamResources(const StreamResources&) = delete;
  StreamResources& operator=(const StreamResources&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  // Handles bound to this stream (made on first use; throw on failure).
  cublasHandle_t blas();
  cublasLtHandle_t blas_lt();
  cudnnHandle_t dnn();
  // Device scratch of at least `bytes` in one of kScratchSlots independent
  // buffers, ordered on this stream: valid for work queued on it until the
  // next scratch() call for the same slot. Grows (stream-ordered free and
  // allocation); never shrinks while the stream lives.
  static constexpr int kScratchSlots = 8;
  void* scratch(size_t bytes, int slot = 0);

 private:
  int device_;
  cudaStream_t stream_;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t blas_lt_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  std::array<void*, kScratchSlots> scratch_{};
  std::array<size_t, kScratchSlots> scratch_bytes_{};
};

// The resources of the stream a kernel is launched on; throws when the host
// gave no stream (hosts older than LOOM_HostApi::kernel_stream).
StreamResources& stream_resources(const sdk::KernelContext& ctx);
// The stream itself.
inline cudaStream_t stream_of(const sdk::KernelContext& ctx) { return stream_resources(ctx).stream(); }

}  // namespace loom::cuda
