// The cuda EP's 2-D forward convolutions through cuDNN's graph API
// (option cudnn_conv_api=graph; kernels/cudnn_graph_conv.h): a plan per
// problem, kept per stream, with the bias, Z and ReLU (or no activation)
// fused in where an engine takes them.
#pragma once

#include <optional>

#include "ep_context.h"
#include "kernels/conv_cudnn.h"
#include "stream_resources.h"

namespace loom::cuda {

// Queues out = conv(in, w) on res's stream for a 2-D problem `s`, with
// `fusion` (may be NULL) applied when a fused plan exists. Returns true
// when the fusion ran inside the plan, false when the caller must apply
// it (the plain plan ran), and nullopt when no graph engine takes the
// problem (nothing was queued: the caller runs the legacy call).
std::optional<bool> graph_conv_forward(StreamResources& res, const EpContext& ep, const CudnnConvShape& s,
                                       const void* in, const void* w, void* out, const ConvFusion* fusion);

}  // namespace loom::cuda
