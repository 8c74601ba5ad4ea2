// cuDNN convolutions through the legacy descriptor API: a CudnnConvShape
// (kernels/conv_geometry.h) run forward (Conv) or as backward data
// (ConvTranspose), with the algorithm chosen once per problem and cached
// in EpContext::conv_choices.
//
// Math type: float32 uses CUDNN_FMA_MATH (exact fp32, no tensor cores)
// unless the EP option use_tf32 is set; then CUDNN_DEFAULT_MATH, which in
// cuDNN 9 permits TF32 tensor cores for float32 on Ampere and later.
// float16 uses CUDNN_TENSOR_OP_MATH with float accumulation (compute type
// CUDNN_DATA_FLOAT).
//
// Algorithm: heuristic (cudnnGet*Algorithm_v7: the first successful result
// whose math type is the one asked for, where that matters for exactness,
// and whose workspace fits EpContext::conv_workspace_bytes) or, with
// cudnn_conv_algo_search=EXHAUSTIVE, measured (cudnnFind*AlgorithmEx, on
// the real tensors, with a workspace of that cap from the stream's own
// scratch, given back after the search; the search times the algorithms,
// so it waits for the stream, once per problem). The chosen algorithm's
// workspace comes from stream scratch slot kConvWorkspaceSlot.
#pragma once

#include <cstddef>

#include "ep_context.h"
#include "kernels/conv_geometry.h"
#include "stream_resources.h"

namespace loom::cuda {

constexpr int kConvWorkspaceSlot = 0;

enum class ConvDirection { kForward, kBackwardData };

// Scratch slots besides the workspace's: the pre-padded input, the
// unpadded transposed result.
constexpr int kConvPrepadSlot = 1;
constexpr int kConvTransposeSlot = 2;

// What a forward convolution may fuse (cudnnConvolutionBiasActivationForward,
// kernels/conv_geometry.h's cudnn_can_fuse says when): y = act(conv + z +
// bias), bias [C] and z (y's shape, may be NULL) in device memory; `relu`
// or `none` for the activation (neither: another one, never fused).
struct ConvFusion {
  const void* bias = nullptr;
  const void* z = nullptr;
  bool relu = false, none = false;
};

// kForward: out (y) = conv(in (x), w). kBackwardData: out (x) =
// conv_transpose(in (y), w). `out` is overwritten (beta = 0). With
// `fusion` (forward only), returns true when the bias, z and activation
// were applied too; false when the caller must apply them. Throws
// sdk::Error naming the cuDNN call that failed.
bool run_cudnn_conv(StreamResources& res, const EpContext& ep, ConvDirection direction, const CudnnConvShape& shape,
                    const void* in, const void* w, void* out, const ConvFusion* fusion = nullptr);

// Y [ys] = conv(X [xs], W [ws]) over geometry g (any pads: asymmetric ones
// pre-pad X into scratch slot kConvPrepadSlot; kernels/conv_geometry.h's
// plan_conv_forward). Tensors are contiguous device memory of `dtype`
// (float, float16), rank 3 to 5, none empty. With `fusion`, returns whether
// its bias, z and activation were applied (see run_cudnn_conv). `nhwc`:
// X, Y and W are channels-last in memory (xs, ws, ys stay in NCHW / KCRS
// order); 2-D only, and only pads cuDNN applies itself (no pre-pad), else
// NOT_IMPLEMENTED.
bool conv_forward(StreamResources& res, const EpContext& ep, const Window& g, int64_t group, int32_t dtype,
                  const Dims& xs, const void* x, const Dims& ws, const void* w, const Dims& ys, void* y,
                  const ConvFusion* fusion = nullptr, bool nhwc = false);

// Y [ys] = ConvTranspose(X [xs], W [ws]) over geometry g (W: [C_in,
// C_out / group, k...]); where cuDNN cannot express the pads or
// output_padding, the unpadded result goes to scratch slot
// kConvTransposeSlot and Y is cropped out of it (plan_conv_transpose).
void conv_transpose(StreamResources& res, const EpContext& ep, const TransposeWindow& g, int64_t group, int32_t dtype,
                    const Dims& xs, const void* x, const Dims& ws, const void* w, const Dims& ys, void* y);

}  // namespace loom::cuda
