// com.microsoft FusedConv, FusedGemm and FusedMatMul (ONNX Runtime semantics;
// reference: plugins/reference/kernels/contrib_fused_conv.cpp and
// contrib_matmul.cpp). Each is rewritten into the plain ONNX node it extends
// plus synthetic nodes in front of its chain, and built by build_conv /
// build_gemm / build_matmul, so the activation (or FusedMatMul's alpha) is a
// post-op of the same primitive the unfused graph would get:
//   FusedConv(X, W, B)   -> Conv -> <activation>      (no Z: see the claim)
//   FusedGemm(A, B, C)   -> Gemm -> <activation>
//   FusedMatMul(A, B)    -> MatMul(op(A), op(B)) [-> Mul(alpha)]
// FusedMatMul's transposes are strided views (copied by a reorder when the
// matmul needs them plain; once at build time for constants), and alpha
// scales a constant operand once, else becomes a binary post-op.
#include <oneapi/dnnl/dnnl.hpp>

#include "eltwise_ops.h"
#include "op_support.h"
#include "ops/op_builders.h"

namespace loom::onednn {
namespace {

// A default-domain float node derived from `from` (for labels and shapes).
NodeSpec synthetic(const NodeSpec& from, const std::string& op, std::vector<std::string> inputs,
                   std::vector<std::string> outputs) {
  NodeSpec s;
  s.op_type = op;
  s.name = from.name;
  s.opset = 13;
  s.inputs = std::move(inputs);
  s.outputs = std::move(outputs);
  s.input_dtypes.assign(s.inputs.size(), LOOM_DTYPE_FLOAT);
  s.input_shapes.assign(s.inputs.size(), std::nullopt);
  s.input_is_constant.assign(s.inputs.size(), false);
  s.output_dtypes.assign(s.outputs.size(), LOOM_DTYPE_FLOAT);
  return s;
}

// The ONNX node FusedConv / FusedGemm / FusedMatMul extends, writing `output`:
// same inputs (FusedConv's Z dropped), types, shapes and attributes.
NodeSpec underlying(const NodeSpec& n, const std::string& output) {
  NodeSpec s = n;
  s.domain.clear();
  s.op_type = n.op_type == "FusedConv" ? "Conv" : n.op_type == "FusedGemm" ? "Gemm" : "MatMul";
  s.opset = 13;
  const size_t inputs = s.op_type == "MatMul" ? 2 : 3;
  if (s.inputs.size() > inputs) {
    s.inputs.resize(inputs);
    s.input_dtypes.resize(inputs);
    s.input_shapes.resize(inputs);
    s.input_is_constant.resize(inputs);
    s.small_constants.erase(s.small_constants.lower_bound(inputs), s.small_constants.end());
    s.constant_shapes.erase(s.constant_shapes.lower_bound(inputs), s.constant_shapes.end());
  }
  s.outputs = {output};
  s.output_dtypes = {LOOM_DTYPE_FLOAT};
  if (s.op_type == "MatMul") {
    // transA / transB / alpha are applied around the MatMul.
    s.ints.erase("transA");
    s.ints.erase("transB");
    s.floats.erase("alpha");
  }
  return s;
}

// The activation of a FusedConv / FusedGemm as an ONNX node reading `input`
// and writing `output`, or nullopt (with *why) when it has none this EP
// builds. FusedConv: `activation_params`; FusedGemm: `activation_<attr>`.
std::optional<NodeSpec> activation_node(const NodeSpec& n, const std::string& input, const std::string& output,
                                        std::string* why) {
  const std::string act = n.attr_string("activation", "");
  if (act.empty()) {
    *why = "no activation";
    return std::nullopt;
  }
  NodeSpec a = synthetic(n, act, {input}, {output});
  if (n.op_type == "FusedConv") {
    auto it = n.float_lists.find("activation_params");
    const std::vector<float> p = it == n.float_lists.end() ? std::vector<float>{} : it->second;
    const size_t want = act == "LeakyRelu" ? 1 : (act == "Clip" || act == "HardSigmoid") ? 2 : 0;
    if (p.size() < want) {
      *why = "FusedConv " + act + " needs " + std::to_string(want) + " activation_params";
      return std::nullopt;
    }
    if (act == "LeakyRelu") a.floats["alpha"] = p[0];
    if (act == "HardSigmoid") a.floats["alpha"] = p[0], a.floats["beta"] = p[1];
    if (act == "Clip") a.opset = 6, a.floats["min"] = p[0], a.floats["max"] = p[1];  // bounds as attributes
    if (act != "Relu" && act != "Tanh" && act != "Sigmoid" && want == 0) {
      *why = "FusedConv activation '" + act + "' is left to the reference EP";
      return std::nullopt;
    }
  } else {
    for (const char* key : {"alpha", "beta", "gamma"})
      if (auto it = n.floats.find(std::string("activation_") + key); it != n.floats.end()) a.floats[key] = it->second;
  }
  if (!eltwise_steps_for(a)) {
    *why = n.op_type + " activation '" + act + "' is not implemented by cpu_onednn";
    return std::nullopt;
  }
  return a;
}

// The intermediate the underlying node writes before the synthetic ones.
std::string inner_name(const NodeSpec& n, const char* what) { return n.outputs[0] + "#" + n.op_type + "/" + what; }

// Builds `anchor` with `front` (synthetic nodes, in order) before `chain`;
// builds whatever of `front` was not absorbed standalone. Returns how many
// nodes of `chain` were absorbed.
size_t build_with_front(ProgramBuilder& b, OpBuilderFn build, const NodeSpec& anchor,
                        const std::vector<const NodeSpec*>& front, const Chain& chain) {
  Chain all = front;
  all.insert(all.end(), chain.begin(), chain.end());
  const size_t absorbed = build(b, anchor, all);
  for (size_t k = absorbed; k < front.size(); ++k) op_builder_for(front[k]->op_type)(b, *front[k], {});
  return absorbed > front.size() ? absorbed - front.size() : 0;
}

size_t build_fused_conv_or_gemm(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  const std::string inner = inner_name(n, "out");
  std::string why;
  const auto act = activation_node(n, inner, n.outputs[0], &why);
  const NodeSpec base = underlying(n, act ? inner : n.outputs[0]);
  OpBuilderFn build = n.op_type == "FusedConv" ? build_conv : build_gemm;
  if (!act) {
    if (n.attr_string("activation", "").empty()) return build(b, base, chain);
    n.fail(why);
  }
  return build_with_front(b, build, base, {&*act}, chain);
}

// `v` with its last two dims swapped: a strided view of its plain bytes.
ValueId transposed(ProgramBuilder& b, ValueId v) {
  std::vector<int64_t> dims = b.dims(v);
  const size_t r = dims.size();
  std::vector<int64_t> strides(r, 1);
  for (size_t i = r - 1; i-- > 0;) strides[i] = strides[i + 1] * dims[i + 1];
  std::swap(dims[r - 1], dims[r - 2]);
  std::swap(strides[r - 1], strides[r - 2]);
  return b.alias(b.plain(v), dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides), dims);
}

size_t build_fused_matmul(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  float alpha = n.attr_float("alpha", 1.f);
  std::string names[2] = {n.inputs[0], n.inputs[1]};
  ValueId values[2] = {b.value_of(n.inputs[0]), b.value_of(n.inputs[1])};
  const bool trans[2] = {n.attr_int("transA", 0) != 0, n.attr_int("transB", 0) != 0};
  for (size_t k = 0; k < 2; ++k) {
    if (!trans[k] || b.dims(values[k]).size() < 2) continue;  // ORT ignores trans on a 1-D operand
    values[k] = transposed(b, values[k]);
    names[k] = inner_name(n, k == 0 ? "a" : "b");
    b.define(names[k], values[k]);
  }
  // alpha scales a constant operand once (B first: it is usually the weights).
  for (size_t k : {1, 0}) {
    if (alpha == 1.f || !b.is_constant(values[k])) continue;
    std::vector<float> data = b.constant_data(values[k]);
    for (float& x : data) x *= alpha;
    values[k] = b.new_constant(data, b.dims(values[k]));
    names[k] = inner_name(n, k == 0 ? "scaled_a" : "scaled_b");
    b.define(names[k], values[k]);
    alpha = 1.f;
  }
  NodeSpec base = underlying(n, alpha == 1.f ? n.outputs[0] : inner_name(n, "out"));
  base.inputs = {names[0], names[1]};
  base.input_shapes = {b.dims(values[0]), b.dims(values[1])};
  base.input_is_constant = {b.is_constant(values[0]), b.is_constant(values[1])};
  base.small_constants.clear();
  base.constant_shapes.clear();
  if (alpha == 1.f) return build_matmul(b, base, chain);
  const std::string scale = inner_name(n, "alpha");
  b.define(scale, b.new_constant({alpha}, {1}));
  const NodeSpec mul = synthetic(n, "Mul", {base.outputs[0], scale}, {n.outputs[0]});
  return build_with_front(b, build_matmul, base, {&mul}, chain);
}

}  // namespace

SupportVerdict check_fused_anchor(const NodeSpec& n) {
  for (size_t i = 0; i < n.inputs.size() && i < 3; ++i)
    if (n.has_input(i) && n.input_dtypes[i] != LOOM_DTYPE_FLOAT) return {OpRole::kUnsupported, "only float32 is compiled"};
  if (n.op_type == "FusedConv" && n.has_input(3))
    return {OpRole::kUnsupported, "FusedConv with Z (sum input) is left to the reference EP"};
  if (n.op_type == "FusedMatMul" && (n.attr_int("transBatchA", 0) != 0 || n.attr_int("transBatchB", 0) != 0))
    return {OpRole::kUnsupported, "FusedMatMul transBatchA / transBatchB are left to the reference EP"};
  if (n.op_type == "FusedMatMul") {
    // A transposed operand needs its rank (2..6) known to be viewed as such.
    for (size_t k = 0; k < 2; ++k)
      if (n.attr_int(k == 0 ? "transA" : "transB", 0) != 0 && !n.input_rank(k))
        return {OpRole::kUnsupported, "FusedMatMul: a transposed operand of unknown rank"};
  } else if (!n.attr_string("activation", "").empty()) {
    std::string why;
    if (!activation_node(n, "x", "y", &why)) return {OpRole::kUnsupported, why};
  }
  return check_support(underlying(n, n.outputs.empty() ? "" : n.outputs[0]));
}

size_t build_fused_anchor(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  if (n.op_type == "FusedMatMul") return build_fused_matmul(b, n, chain);
  return build_fused_conv_or_gemm(b, n, chain);
}

}  // namespace loom::onednn
