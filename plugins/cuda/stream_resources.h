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
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kernels/cudnn_graph_conv.h"
#include "loom/sdk.h"

namespace loom::cuda {

class StreamResources {
 public:
  // `blocking_waits`: synchronize() sleeps until the device signals rather
  // than polling (EpOptions::host_wait_blocks).
  StreamResources(int device, cudaStream_t stream, bool blocking_waits)
      : device_(device), stream_(stream), blocking_waits_(blocking_waits) {}
  ~StreamResources();
  StreamResources(const StreamResources&) = delete;
  StreamResources& operator=(const StreamResources&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  // Blocks until the work queued so far is done (LOOM_Stream::synchronize).
  LOOM_Status* synchronize();
  // Handles bound to this stream (made on first use; throw on failure).
  cublasHandle_t blas();
  cublasLtHandle_t blas_lt();
  cudnnHandle_t dnn();
  // Device scratch of at least `bytes` for the work the current compute call
  // queues on this stream. From the host (LOOM_HostApi::kernel_scratch: the
  // core's device arena, under the run's limits, reused by later steps in
  // stream order) when it offers it; else, on older hosts, from own_scratch.
  void* scratch(size_t bytes, int slot = 0);
  // One of kScratchSlots buffers this stream keeps, ordered on it: valid for
  // work queued on it until the next call for the same slot. Grows
  // (stream-ordered free and allocation); never shrinks while the stream
  // lives. For buffers of a fixed size the host's limits need not see (the
  // cuDNN algorithm search's workspace).
  static constexpr int kScratchSlots = 8;
  void* own_scratch(size_t bytes, int slot = 0);
  // Gives own_scratch's `slot` back (stream-ordered: work queued before
  // still reads it). For one-off buffers, such as the algorithm search's
  // workspace of up to 4 GiB, that the stream should not keep.
  void release_own_scratch(int slot);
  // The compute call now running on this stream (stream_resources sets it;
  // the host runs one step at a time per stream).
  void bind(LOOM_KernelContext* ctx) { ctx_ = ctx; }

  // cuDNN graph-API convolution plans built on this stream's handle, by
  // problem key (kernels/conv_graph_forward.h); a null entry records that
  // no engine took the problem. Destroyed before the handle.
  std::unordered_map<std::string, std::unique_ptr<GraphConvPlan>>& graph_convs() { return graph_convs_; }

 private:
  LOOM_KernelContext* ctx_ = nullptr;
  int device_;
  cudaStream_t stream_;
  bool blocking_waits_;
  std::mutex sync_mutex_;             // synchronize() is thread-safe
  cudaEvent_t sync_event_ = nullptr;  // made on the first blocking synchronize
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t blas_lt_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  std::unordered_map<std::string, std::unique_ptr<GraphConvPlan>> graph_convs_;
  std::array<void*, kScratchSlots> scratch_{};
  std::array<size_t, kScratchSlots> scratch_bytes_{};
};

// The resources of the stream a kernel is launched on; throws when the host
// gave no stream (hosts older than LOOM_HostApi::kernel_stream).
StreamResources& stream_resources(const sdk::KernelContext& ctx);
// The stream itself.
inline cudaStream_t stream_of(const sdk::KernelContext& ctx) { return stream_resources(ctx).stream(); }

}  // namespace loom::cuda
