// 1-D convolution as 2-D (extended): Conv (or com.microsoft FusedConv, which
// conv_activation_fusion makes first, or ConvTranspose) over [N, C, L]
// becomes Reshape [N, C, 1, L] -> the 2-D op with a 1 x K kernel ->
// Reshape [N, M, L'], the weight stored once as [M, C/g, 1, K] (ConvTranspose:
// [C, M/g, 1, K]; its output_padding gains a 0 and its output_shape a 1 in
// front). Audio front-ends and STFTs
// written as Conv are 1-D; providers that compile only 2-D convolutions
// (cpu_onednn) run them this way instead of leaving them to the reference
// EP. The 2-D node computes the same sums in the same order. The fusion gate
// keeps the 1-D node where the provider that would run it does not run the
// 2-D one. The Reshapes use 0 (copy the dim) and -1, so any N and L work.
#include <optional>

#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

// Attribute `name` (ints, one per spatial dim, or two per dim for pads) with
// the leading H entries inserted: {h} before each half. output_shape may
// also list N and C first ([N, C, L]): it gains the 1 before L.
void widen_ints(ir::Node& n, const std::string& name, int64_t h, bool pads) {
  for (ir::Attribute& a : n.attributes) {
    if (a.name != name || a.type != ir::AttrType::kInts) continue;
    if (pads && a.ints.size() == 2) a.ints = {h, a.ints[0], h, a.ints[1]};
    else if (!pads && a.ints.size() == 1) a.ints = {h, a.ints[0]};
    else if (!pads && name == "output_shape" && a.ints.size() == 3) a.ints = {a.ints[0], a.ints[1], h, a.ints[2]};
  }
}

// Whether every windowed attribute of the 1-D conv has the 1-D form (so the
// widening is complete); unknown attributes keep the node as it is.
bool attributes_fit(const ir::Node& n) {
  const bool transposed = n.op_type == "ConvTranspose";
  for (const ir::Attribute& a : n.attributes) {
    if (a.name == "kernel_shape" || a.name == "strides" || a.name == "dilations" ||
        (transposed && a.name == "output_padding")) {
      if (a.type != ir::AttrType::kInts || a.ints.size() != 1) return false;
    } else if (transposed && a.name == "output_shape") {
      if (a.type != ir::AttrType::kInts || (a.ints.size() != 1 && a.ints.size() != 3)) return false;
    } else if (a.name == "pads") {
      if (a.type != ir::AttrType::kInts || a.ints.size() != 2) return false;
    } else if (a.name != "group" && a.name != "auto_pad" && a.name != "activation" && a.name != "activation_params") {
      return false;
    }
  }
  return true;
}

std::optional<ir::ValueType> with_unit_h(const ir::ValueType* t) {
  if (t == nullptr || !t->has_shape || t->dims.size() != 3) return std::nullopt;
  ir::ValueType out = *t;
  out.dims.insert(out.dims.begin() + 2, DimInfo{1, ""});
  return out;
}

Tensor int64s(const std::vector<int64_t>& v) {
  return Tensor::from_vector(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

class Conv1dAsConv2d : public Pass {
 public:
  std::string name() const override { return "conv1d_as_conv2d"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    auto onnx_opset = graph.opsets.find("");
    if (onnx_opset == graph.opsets.end() || onnx_opset->second < 5) return Status::ok();  // Reshape-5 takes a shape input
    std::vector<ir::Node> convs;
    for (const auto& np : graph.nodes()) {
      const ir::Node& n = *np;
      const bool fused = n.op_type == "FusedConv" && n.domain == kMicrosoftDomain;
      const bool onnx = (n.op_type == "Conv" || n.op_type == "ConvTranspose") && n.domain.empty();
      if (!(fused || onnx) || n.outputs.size() != 1 || n.inputs.size() < 2) continue;
      const std::string& w = n.inputs[1];
      const ir::ValueType* wt = graph.type_of(w);
      if (!graph.is_initializer(w) || graph.is_graph_input(w) || wt == nullptr || wt->dims.size() != 3) continue;
      const ir::ValueType* xt = graph.type_of(n.inputs[0]);
      if (xt == nullptr || !xt->has_shape || xt->dims.size() != 3 || !attributes_fit(n)) continue;
      convs.push_back(n);
    }
    for (const ir::Node& conv : convs) {
      GraphPatch patch(graph, name() + " at '" + conv.label() + "'");
      const Tensor& w = graph.initializers.at(conv.inputs[1]);
      Dims w4_dims = w.dims();
      w4_dims.insert(w4_dims.begin() + 2, 1);
      auto w4 = Tensor::from_bytes(w.dtype(), w4_dims, w.data(), w.byte_size());
      if (!w4) continue;
      const std::string w_name = patch.add_initializer(conv.inputs[1] + "_2d", *w4);
      const std::string to4 = patch.add_initializer(conv.name + "/to_2d_shape", int64s({0, 0, 1, -1}));
      const std::string to3 = patch.add_initializer(conv.name + "/to_1d_shape", int64s({0, 0, -1}));
      const std::string x4 = patch.fresh_name(conv.inputs[0] + "/2d");
      const std::string y4 = patch.fresh_name(conv.outputs[0] + "/2d");
      if (auto t = with_unit_h(graph.type_of(conv.inputs[0]))) patch.set_type(x4, *t);
      if (auto t = with_unit_h(graph.type_of(conv.outputs[0]))) patch.set_type(y4, *t);
      ir::Node conv2d = conv;
      if (conv.inputs.size() > 3 && !conv.inputs[3].empty()) {  // FusedConv's Z, shaped like the output
        const std::string z4 = patch.fresh_name(conv.inputs[3] + "/2d");
        if (auto t = with_unit_h(graph.type_of(conv.inputs[3]))) patch.set_type(z4, *t);
        patch.add_node(
            fused_node(graph, "Reshape", "", {conv.inputs[3], to4}, {z4}, patch.fresh_name(conv.name + "/z_to_2d")));
        conv2d.inputs[3] = z4;
      }
      conv2d.inputs[0] = x4;
      conv2d.inputs[1] = w_name;
      conv2d.outputs = {y4};
      conv2d.name = patch.fresh_name(conv.name.empty() ? "Conv2d" : conv.name + "/2d");
      widen_ints(conv2d, "kernel_shape", 1, false);
      widen_ints(conv2d, "strides", 1, false);
      widen_ints(conv2d, "dilations", 1, false);
      widen_ints(conv2d, "pads", 0, true);
      widen_ints(conv2d, "output_padding", 0, false);
      widen_ints(conv2d, "output_shape", 1, false);
      if (ctx.accept_fusion &&
          !ctx.accept_fusion(graph, {conv.id}, conv2d, patch.staged_types(), patch.staged_initializers()))
        continue;
      patch.add_node(fused_node(graph, "Reshape", "", {conv.inputs[0], to4}, {x4}, patch.fresh_name(conv.name + "/to_2d")));
      patch.add_node(std::move(conv2d));
      patch.add_node(fused_node(graph, "Reshape", "", {y4, to3}, {conv.outputs[0]}, patch.fresh_name(conv.name + "/to_1d")));
      patch.remove_node(conv.id);
      commit_or_skip(patch, ctx, changed);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv1d_as_conv2d() { return std::make_unique<Conv1dAsConv2d>(); }

}  // namespace loom::transform
