// Launchers of the convolution family's own device code (kernels/conv.cu):
// the zero-filling window copy (pre-padding a convolution's input, cropping
// a transposed convolution's result) and the epilogue that adds the bias
// and the residual and applies the activation in one pass. Pointers are
// device memory; everything is queued on `stream`; n may be 0. Each returns
// the launch error, or cudaErrorInvalidValue for a type it lacks.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/conv_index.h"

namespace loom::cuda {

// y[i] = x[copy.source(i)] or zero, over n output elements of
// `element_bytes` each (2, 4 or 8).
cudaError_t launch_window_copy(size_t element_bytes, const WindowCopy& copy, const void* x, void* y, int64_t n,
                               cudaStream_t stream);

// The activations of com.microsoft FusedConv (reference EP semantics).
enum class ConvActivation : int {
  kIdentity,
  kRelu,
  kTanh,
  kSigmoid,
  kSilu,         // x * sigmoid(x)
  kLeakyRelu,    // x >= 0 ? x : alpha * x
  kClip,         // min(max(x, alpha), beta)
  kHardSigmoid,  // max(0, min(1, alpha * x + beta))
};

struct ConvEpilogue {
  ConvActivation activation = ConvActivation::kIdentity;
  float alpha = 0.f, beta = 0.f;
};

// In place over y [N, channels, spatial] (n elements):
// y = act(y + bias[channel] + z), bias ([channels]) and z (y's shape) each
// optional (null). dtype: float, float16.
cudaError_t launch_conv_epilogue(int32_t dtype, const ConvEpilogue& e, void* y, const void* bias, const void* z,
                                 int64_t channels, int64_t spatial, int64_t n, cudaStream_t stream);

}  // namespace loom::cuda
