// Channels-last layout (the layout phase, after the fusions and the
// precision conversion): a 2-D convolution or pool whose provider prefers
// NHWC becomes the same op of domain loom.nhwc between two Transposes,
//   X -> Transpose [0,2,3,1] -> loom.nhwc op -> Transpose [0,3,1,2] -> Y,
// and the transpose simplification then cancels the Transpose pairs between
// neighbouring NHWC nodes, so a chain of convolutions reorders only where
// it starts and ends. Tensor-core convolutions (cuDNN in float16, or float32
// with TF32) read NHWC natively; in NCHW they transpose inside every call.
//
// The loom.nhwc ops (transform/passes/channels_last.h) mean what their ai.onnx /
// com.microsoft namesakes mean with X, Y and Z in NHWC and W in OHWI: the
// weight is reordered here, once, as a new constant.
//
// Only a provider that asks gets them: a node is rewritten when the fusion
// gate says the provider that would run it also runs its NHWC version (a
// provider claims loom.nhwc nodes only where it prefers them; cuda's option
// prefer_nhwc). Without a gate (no providers to ask), nothing changes.
#include "transform/passes/channels_last.h"

#include <cstdint>
#include <optional>

#include "transform/framework/fused_node.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

enum class Family { kConv, kPool, kGlobalPool };

std::optional<Family> family_of(const ir::Node& n) {
  if (n.domain.empty()) {
    if (n.op_type == "Conv") return Family::kConv;
    if (n.op_type == "MaxPool" || n.op_type == "AveragePool") return Family::kPool;
    if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") return Family::kGlobalPool;
  } else if (n.domain == kMicrosoftDomain && n.op_type == "FusedConv") {
    return Family::kConv;
  }
  return std::nullopt;
}

// Whether every attribute is one the NHWC op reads the same way (an
// attribute it would not know keeps the node in NCHW).
bool attributes_known(const ir::Node& n, Family f) {
  for (const ir::Attribute& a : n.attributes) {
    const std::string& k = a.name;
    if (f == Family::kGlobalPool) return false;
    if (k == "kernel_shape" || k == "strides" || k == "dilations" || k == "pads" || k == "auto_pad") continue;
    if (f == Family::kConv && (k == "group" || k == "activation" || k == "activation_params")) continue;
    if (f == Family::kPool && (k == "ceil_mode" || k == "count_include_pad")) continue;
    if (f == Family::kPool && k == "storage_order" && n.op_type == "MaxPool") continue;  // Indices only
    return false;
  }
  return true;
}

bool float_4d(const ir::ValueType* t) {
  return t != nullptr && t->kind == ValueKind::kTensor && t->has_shape && t->dims.size() == 4 &&
         (t->dtype == DType::kFloat || t->dtype == DType::kFloat16 || t->dtype == DType::kDouble);
}

ir::ValueType permuted(const ir::ValueType& t, const std::vector<int64_t>& perm) {
  ir::ValueType out = t;
  for (size_t i = 0; i < perm.size(); ++i) out.dims[i] = t.dims[static_cast<size_t>(perm[i])];
  return out;
}

ir::Node transpose_node(const ir::Graph& g, const std::string& in, const std::string& out, const std::string& name,
                        const std::vector<int64_t>& perm) {
  ir::Node t = fused_node(g, "Transpose", "", {in}, {out}, name);
  ir::Attribute p;
  p.name = "perm";
  p.type = ir::AttrType::kInts;
  p.ints = perm;
  t.attributes.push_back(std::move(p));
  return t;
}

// Whether `n` can be rewritten: a 4-D float input and output, known
// attributes, and for a convolution a constant 4-D weight of the input's
// type and a 4-D Z (if any) of the output's type.
bool eligible(const ir::Graph& g, const ir::Node& n, Family f) {
  if (n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty() || n.outputs[0].empty()) return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return false;  // MaxPool's Indices
  if (!attributes_known(n, f)) return false;
  const ir::ValueType* x = g.type_of(n.inputs[0]);
  const ir::ValueType* y = g.type_of(n.outputs[0]);
  if (!float_4d(x) || !float_4d(y) || x->dtype != y->dtype) return false;
  if (f != Family::kConv) return n.inputs.size() == 1;
  if (n.inputs.size() < 2 || n.inputs.size() > 4) return false;
  const std::string& w = n.inputs[1];
  auto wi = g.initializers.find(w);
  if (w.empty() || wi == g.initializers.end() || g.is_graph_input(w)) return false;
  if (wi->second.dims().size() != 4 || wi->second.dtype() != x->dtype) return false;
  if (n.inputs.size() == 4 && !n.inputs[3].empty()) {
    const ir::ValueType* z = g.type_of(n.inputs[3]);
    if (!float_4d(z) || z->dtype != y->dtype) return false;  // Z has Y's shape (FusedConv's contract)
  }
  return true;
}

class ChannelsLast : public Pass {
 public:
  std::string name() const override { return "channels_last"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    if (!ctx.accept_fusion) return Status::ok();
    std::vector<std::pair<ir::Node, Family>> candidates;
    for (const auto& np : graph.nodes())
      if (auto f = family_of(*np); f && eligible(graph, *np, *f)) candidates.emplace_back(*np, *f);
    for (const auto& [n, f] : candidates) {
      GraphPatch patch(graph, name() + " at '" + n.label() + "'");
      const std::string hint = n.name.empty() ? n.op_type : n.name;
      ir::Node nhwc = n;
      nhwc.domain = kNhwcDomain;
      nhwc.opset = 1;
      nhwc.name = patch.fresh_name(hint + "/nhwc");
      auto to_nhwc = [&](const std::string& v) {
        const std::string out = patch.fresh_name(v + "/nhwc");
        patch.set_type(out, permuted(*graph.type_of(v), kToNhwc));
        patch.add_node(transpose_node(graph, v, out, patch.fresh_name(hint + "/to_nhwc"), kToNhwc));
        return out;
      };
      nhwc.inputs[0] = to_nhwc(n.inputs[0]);
      if (f == Family::kConv) {
        // Asked with the reordered weight's type only: reordering every
        // convolution's weight before knowing would cost more than the
        // question (the reorder follows a yes).
        nhwc.inputs[1] = patch.fresh_name(n.inputs[1] + "/ohwi");
        patch.set_type(nhwc.inputs[1], permuted(ir::tensor_type(graph.initializers.at(n.inputs[1])), kToNhwc));
        if (n.inputs.size() == 4 && !n.inputs[3].empty()) nhwc.inputs[3] = to_nhwc(n.inputs[3]);
      }
      const std::string y_nhwc = patch.fresh_name(n.outputs[0] + "/nhwc");
      patch.set_type(y_nhwc, permuted(*graph.type_of(n.outputs[0]), kToNhwc));
      nhwc.outputs = {y_nhwc};
      if (!ctx.accept_fusion(graph, {n.id}, nhwc, patch.staged_types(), patch.staged_initializers())) continue;
      if (f == Family::kConv) {
        auto w = ohwi_weight(graph.initializers.at(n.inputs[1]));
        if (!w) continue;
        nhwc.inputs[1] = patch.add_initializer(n.inputs[1] + "/ohwi", std::move(*w));
      }
      patch.add_node(std::move(nhwc));
      patch.add_node(transpose_node(graph, y_nhwc, n.outputs[0], patch.fresh_name(hint + "/to_nchw"), kToNchw));
      patch.import_domain(kNhwcDomain, 1);
      patch.remove_node(n.id);
      commit_or_skip(patch, ctx, changed);
    }
    return Status::ok();
  }
};

}  // namespace

Expected<Tensor> ohwi_weight(const Tensor& w) {
  const Dims& d = w.dims();
  if (d.size() != 4) return invalid_argument("an OHWI weight needs a 4-D OIHW one");
  const int64_t m = d[0], c = d[1], kh = d[2], kw = d[3];
  LOOM_ASSIGN_OR_RETURN(Tensor out, Tensor::zeros(w.dtype(), {m, kh, kw, c}));
  if (w.element_count() == 0) return out;
  const size_t es = w.byte_size() / static_cast<size_t>(w.element_count());
  auto reorder = [&](auto tag) {
    using E = decltype(tag);
    const E* src = static_cast<const E*>(w.data());
    E* dst = static_cast<E*>(out.mutable_data());
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x) dst[((o * kh + y) * kw + x) * c + i] = src[((o * c + i) * kh + y) * kw + x];
  };
  switch (es) {
    case 1: reorder(uint8_t{}); break;
    case 2: reorder(uint16_t{}); break;
    case 4: reorder(uint32_t{}); break;
    case 8: reorder(uint64_t{}); break;
    default: return invalid_argument("an OHWI weight of " + std::to_string(es) + "-byte elements");
  }
  return out;
}

std::unique_ptr<Pass> make_channels_last() { return std::make_unique<ChannelsLast>(); }

}  // namespace loom::transform
