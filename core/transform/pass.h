// Graph transformation passes and the context they run in. Passes are grouped
// in levels (see loom::OptimizationLevel); a session runs every pass of each
// enabled level, in order, until a round changes nothing.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "loom/config.h"

namespace loom::transform {

// Evaluates one node on host tensors through a loaded CPU plugin (the core
// has no kernels). Returns the node's outputs in order (empty Tensor for
// unnamed outputs).
using NodeEvaluator = std::function<Expected<std::vector<Tensor>>(const ir::Graph& graph, const ir::Node& node)>;

struct PassContext {
  NodeEvaluator evaluate;  // may be empty: passes that need it then do nothing
  std::string model_name;
  // Asked by extended-level fusions before they replace the nodes
  // `replaced` by `fused` (`staged`: types of values the same rewrite adds;
  // `staged_initializers`: constants it adds, such as a transposed weight):
  // false keeps the nodes (the EP that would run them does not run the
  // fused op). Unset: every fusion is allowed.
  std::function<bool(const ir::Graph&, const std::vector<ir::NodeId>& replaced, const ir::Node& fused,
                     const std::map<std::string, ir::ValueType>& staged,
                     const std::map<std::string, Tensor>& staged_initializers)>
      accept_fusion;
  // Bumped by the pass manager after every pass run that changed the graph
  // (passes that cache work per graph state compare it).
  uint64_t graph_version = 0;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual OptimizationLevel level() const = 0;
  // Sets *changed when the graph was modified. An error leaves the graph valid.
  virtual Status run(ir::Graph& graph, PassContext& ctx, bool* changed) = 0;
};

// Lowerings (level kDisabled) run at every level: they give ops their meaning.
std::unique_ptr<Pass> make_gradient_lowering();
std::unique_ptr<Pass> make_constant_folding();
std::unique_ptr<Pass> make_cast_elimination();
std::unique_ptr<Pass> make_transpose_reshape_simplification();
std::unique_ptr<Pass> make_common_subexpression_elimination();
std::unique_ptr<Pass> make_conv_bn_folding();
std::unique_ptr<Pass> make_conv_scale_folding();
std::unique_ptr<Pass> make_identity_elimination();
std::unique_ptr<Pass> make_dead_code_elimination();
std::unique_ptr<Pass> make_reshape_shape_folding();
// QDQ models: activations a QuantizeLinear clamps anyway (basic), and
// DQ -> Conv / MatMul -> Q into QLinearConv / QLinearMatMul (extended).
std::unique_ptr<Pass> make_quantized_activation_removal();
std::unique_ptr<Pass> make_qdq_fusion();
// DQ -> MatMul / Gemm with a float result that is not quantized again (a
// classifier's logits) into com.microsoft MatMulIntegerToFloat (extended).
std::unique_ptr<Pass> make_matmul_integer_to_float_fusion();
std::unique_ptr<Pass> make_dynamic_quant_matmul_fusion();  // quantize_dynamic's MatMulInteger chains
std::unique_ptr<Pass> make_shape_inference();
// Extended level: fusions into ONNX Runtime's contrib ops (com.microsoft).
std::unique_ptr<Pass> make_layer_norm_fusion();
std::unique_ptr<Pass> make_gelu_fusion();
std::unique_ptr<Pass> make_fast_gelu_fusion();
std::unique_ptr<Pass> make_attention_fusion();
std::unique_ptr<Pass> make_embed_layer_norm_fusion();
std::unique_ptr<Pass> make_skip_layer_norm_fusion();
std::unique_ptr<Pass> make_matmul_add_fusion();  // and the three below: ORT's MatMul/Conv/Gemm fusions
std::unique_ptr<Pass> make_fused_matmul_fusion();
std::unique_ptr<Pass> make_conv_activation_fusion();
// 1-D Conv as a 2-D one between two Reshapes (for providers that compile 2-D only).
std::unique_ptr<Pass> make_conv1d_as_conv2d();
std::unique_ptr<Pass> make_gemm_activation_fusion();
// The layout phase (transform::optimize_layout): 2-D convolutions and pools
// into channels-last loom.nhwc ops where their provider prefers them.
std::unique_ptr<Pass> make_channels_last();

}  // namespace loom::transform
