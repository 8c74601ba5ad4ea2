#include "kernels/half_operands.h"

#include <string>

#include "cuda_check.h"
#include "kernels/elementwise.h"

namespace loom::cuda {

const void* half_copy(StreamResources& res, const void* src, int64_t count, int slot) {
  void* half = res.scratch(static_cast<size_t>(count) * 2, slot);
  check(launch_cast(LOOM_DTYPE_FLOAT, src, LOOM_DTYPE_FLOAT16, half, count, res.stream()), "fp16 mode: cast to half");
  return half;
}

void widen_to_float(StreamResources& res, const void* x, void* y, int64_t count) {
  check(launch_cast(LOOM_DTYPE_FLOAT16, x, LOOM_DTYPE_FLOAT, y, count, res.stream()), "fp16 mode: cast to float");
}

HalfConstant::~HalfConstant() {
  if (half_ == nullptr) return;
  cudaSetDevice(device_);
  cudaFree(half_);
}

const void* HalfConstant::get(StreamResources& res, const void* src, int64_t count) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (src_ == src && half_ != nullptr) return half_;
  if (half_ != nullptr) {  // another buffer than before: not expected for a constant, but stay right
    check(cudaStreamSynchronize(res.stream()), "cudaStreamSynchronize");
    cudaFree(half_);
    half_ = nullptr;
  }
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, static_cast<size_t>(count) * 2);
  if (e != cudaSuccess)
    throw sdk::Error("cuda fp16 mode: cannot allocate " + std::to_string(count * 2) + " bytes for a weight: " +
                         cudaGetErrorString(e),
                     LOOM_STATUS_OUT_OF_MEMORY);
  half_ = p;
  device_ = res.device();
  check(launch_cast(LOOM_DTYPE_FLOAT, src, LOOM_DTYPE_FLOAT16, half_, count, res.stream()), "fp16 mode: weight cast");
  check(cudaStreamSynchronize(res.stream()), "cudaStreamSynchronize (fp16 weight)");
  src_ = src;
  return half_;
}

}  // namespace loom::cuda
