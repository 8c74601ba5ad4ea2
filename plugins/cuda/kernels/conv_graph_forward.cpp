#include "kernels/conv_graph_forward.h"

#include <stdexcept>
#include <string>

#include "kernels/conv_geometry.h"
#include "kernels/cudnn_graph_conv.h"
#include "library_errors.h"

namespace loom::cuda {
namespace {

// The plan's problem: s's dims, and the fusion asked for.
GraphConvShape graph_shape(const CudnnConvShape& s, bool tensor_cores, bool bias, bool z, bool relu) {
  GraphConvShape g;
  for (int i = 0; i < 4; ++i) {
    g.x[i] = s.x[i];
    g.w[i] = s.w[i];
    g.y[i] = s.y[i];
  }
  for (int i = 0; i < 2; ++i) {
    g.pads[i] = s.pads[i];
    g.strides[i] = s.strides[i];
    g.dilations[i] = s.dilations[i];
  }
  g.nhwc = s.nhwc;
  g.data = s.dtype == LOOM_DTYPE_FLOAT16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  g.tensor_cores = tensor_cores;
  g.bias = bias;
  g.z = z;
  g.relu = relu;
  return g;
}

// The plan for `key`, built on first use; NULL when no engine takes it.
const GraphConvPlan* plan_for(StreamResources& res, const EpContext& ep, const std::string& key,
                              const GraphConvShape& g) {
  auto& plans = res.graph_convs();
  auto it = plans.find(key);
  if (it == plans.end()) {
    std::unique_ptr<GraphConvPlan> plan;
    try {
      plan = std::make_unique<GraphConvPlan>(res.dnn(), g, ep.conv_workspace_bytes);
    } catch (const std::runtime_error&) {
      // No engine for this problem (or this fusion): remembered, so the
      // next call goes straight to the fallback.
    }
    it = plans.emplace(key, std::move(plan)).first;
  }
  return it->second.get();
}

}  // namespace

std::optional<bool> graph_conv_forward(StreamResources& res, const EpContext& ep, const CudnnConvShape& s,
                                       const void* in, const void* w, void* out, const ConvFusion* fusion) {
  if (s.nb_dims != 4 || (s.dtype != LOOM_DTYPE_FLOAT && s.dtype != LOOM_DTYPE_FLOAT16)) return std::nullopt;
  // Tensor cores for float16, and for float32 only with TF32 asked for (as the legacy path's math type).
  const bool tensor_cores = s.dtype == LOOM_DTYPE_FLOAT16 || ep.options.use_tf32;
  const std::string base = conv_choice_key("graph", s, tensor_cores, false);
  // Bias, Z and ReLU / identity in the plan, as cuDNN's fused legacy call takes them.
  const bool fuse = fusion != nullptr && fusion->bias != nullptr && (fusion->relu || fusion->none);
  const GraphConvPlan* plan = nullptr;
  bool fused = false;
  if (fuse) {
    const bool z = fusion->z != nullptr;
    plan = plan_for(res, ep, base + (z ? "|bias|z" : "|bias") + (fusion->relu ? "|relu" : ""),
                    graph_shape(s, tensor_cores, true, z, fusion->relu));
    fused = plan != nullptr;
  }
  if (plan == nullptr) plan = plan_for(res, ep, base, graph_shape(s, tensor_cores, false, false, false));
  if (plan == nullptr) return std::nullopt;
  void* ws = plan->workspace_bytes() > 0 ? res.scratch(plan->workspace_bytes(), kConvWorkspaceSlot) : nullptr;
  const cudnnStatus_t st = plan->run(res.dnn(), in, w, out, fused ? fusion->bias : nullptr,
                                     fused ? fusion->z : nullptr, ws);
  check_dnn(st, "cudnnBackendExecute (convolution plan)");
  return fused;
}

}  // namespace loom::cuda
