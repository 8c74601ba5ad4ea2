#include "op_support.h"

#include <optional>
#include <set>

#include "eltwise_ops.h"
#include "resize_rules.h"

namespace loom::onednn {
namespace {

SupportVerdict no(std::string why) { return {OpRole::kUnsupported, std::move(why)}; }
SupportVerdict yes(OpRole role) { return {role, {}}; }

bool all_float(const NodeSpec& n, size_t inputs_to_check) {
  for (size_t i = 0; i < inputs_to_check && i < n.inputs.size(); ++i)
    if (n.has_input(i) && n.input_dtypes[i] != LOOM_DTYPE_FLOAT) return false;
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty() && n.output_dtypes[i] != LOOM_DTYPE_FLOAT) return false;
  return true;
}

bool rank_is(const NodeSpec& n, size_t input, size_t rank) { return n.input_rank(input) == rank; }

// "input 0 is float16" (or an output): what all_float refused.
std::string first_non_float(const NodeSpec& n, size_t inputs_to_check) {
  for (size_t i = 0; i < inputs_to_check && i < n.inputs.size(); ++i) {
    if (!n.has_input(i) || n.input_dtypes[i] == LOOM_DTYPE_FLOAT) continue;
    if (n.input_dtypes[i] == LOOM_DTYPE_UNDEFINED)
      return "the element type of input " + std::to_string(i) + " is unknown (type inference could not follow it)";
    return "input " + std::to_string(i) + " is " + sdk::dtype_name(n.input_dtypes[i]);
  }
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty() && n.output_dtypes[i] != LOOM_DTYPE_FLOAT)
      return "output " + std::to_string(i) + " is " + sdk::dtype_name(n.output_dtypes[i]);
  return "a value is not float32";
}

}  // namespace

std::string check_window_2d(const NodeSpec& n) {
  const auto pads = n.attr_ints("pads");
  if (!pads.empty() && pads.size() != 4) return "pads must have 4 entries";
  for (int64_t p : pads)
    if (p < 0) return "negative pads";
  for (const char* key : {"strides", "dilations", "kernel_shape"}) {
    const auto v = n.attr_ints(key);
    if (!v.empty() && v.size() != 2) return std::string(key) + " must have 2 entries";
    for (int64_t x : v)
      if (x < 1) return std::string(key) + " must be positive";
  }
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  static const std::set<std::string> known = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
  if (!known.count(auto_pad)) return "unknown auto_pad '" + auto_pad + "'";
  return {};
}

namespace {

SupportVerdict check_conv(const NodeSpec& n) {
  // ONNX gives X and W one rank, so rank-4 weights make an input of unknown
  // rank (lost by shape inference after a computed Reshape) a 2-D conv too.
  if (!rank_is(n, 1, 4)) return no("only 2-D convolutions (rank-4 weights) are compiled");
  if (n.input_rank(0) && !rank_is(n, 0, 4)) return no("only 2-D convolutions (rank-4 input) are compiled");
  if (n.has_input(2) && !rank_is(n, 2, 1)) return no("bias must be rank 1");
  if (auto e = check_window_2d(n); !e.empty()) return no(e);
  if (n.attr_int("group", 1) < 1) return no("group must be positive");
  if (n.op_type == "ConvTranspose") {
    if (n.has_attr("output_shape")) return no("output_shape is left to the reference EP");
    const std::string ap = n.attr_string("auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID") return no("ConvTranspose auto_pad SAME_* is left to the reference EP");
    const auto op = n.attr_ints("output_padding", {0, 0});
    const auto pads = n.attr_ints("pads", {0, 0, 0, 0});
    const auto strides = n.attr_ints("strides", {1, 1});
    const auto dil = n.attr_ints("dilations", {1, 1});
    if (op.size() != 2) return no("output_padding must have 2 entries");
    for (size_t i = 0; i < 2; ++i)
      if (op[i] < 0 || op[i] >= std::max(strides[i], dil[i])) return no("invalid output_padding");
    // oneDNN has no output padding; it becomes less end padding, which must stay >= 0.
    for (size_t i = 0; i < 2; ++i)
      if (op[i] > (ap == "VALID" ? 0 : pads[i + 2])) return no("output_padding beyond the end padding");
  }
  return yes(OpRole::kAnchor);
}

// Pooling windows over inputs of unknown size claimed at most this wide.
constexpr int64_t kMaxUnknownPoolKernel = 4096;

SupportVerdict check_pool(const NodeSpec& n) {
  if (!rank_is(n, 0, 4)) return no("only 2-D pooling (rank-4 input) is compiled");
  if (n.used_output_count() != 1) return no("MaxPool Indices output is left to the reference EP");
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") return yes(OpRole::kCompute);
  if (auto e = check_window_2d(n); !e.empty()) return no(e);
  const auto kernel = n.attr_ints("kernel_shape");
  if (kernel.size() != 2) return no("kernel_shape must have 2 entries");
  const auto pads = n.attr_ints("pads", {0, 0, 0, 0});
  const auto dil = n.attr_ints("dilations", {1, 1});
  for (size_t i = 0; i < 4; ++i)
    if (pads[i] >= (kernel[i % 2] - 1) * dil[i % 2] + 1) return no("pads must be smaller than the kernel");
  // oneDNN visits every kernel position of every window, padding included;
  // the reference EP visits only the taps inside the input, so a window
  // larger than the input (SAME pads around a 2^62 kernel) stays there.
  const auto& x = n.input_shapes.empty() ? std::nullopt : n.input_shapes[0];
  for (size_t i = 0; i < 2; ++i) {
    const int64_t in = x && x->size() == 4 ? (*x)[2 + i] : -1;
    if (kernel[i] > (in >= 0 ? in : kMaxUnknownPoolKernel))
      return no("a pooling window larger than its input is left to the reference EP");
  }
  if (n.op_type == "AveragePool") {
    if (!n.attr_ints("dilations").empty()) return no("AveragePool dilations are left to the reference EP");
    if (n.attr_int("ceil_mode", 0) && n.attr_int("count_include_pad", 0))
      return no("AveragePool ceil_mode with count_include_pad is left to the reference EP");
  }
  return yes(OpRole::kCompute);
}

// Unknown ranks are claimed where the builder handles every rank and checks
// the concrete shapes when a program is built (errors then name the node):
// programs are compiled per tuple of input shapes anyway.

SupportVerdict check_matmul(const NodeSpec& n) {
  // Any ranks 1..6, batch dims broadcast: the builder checks them (unknown ranks too).
  for (size_t i = 0; i < 2; ++i)
    if (const auto r = n.input_rank(i); r && (*r < 1 || *r > 6)) return no("operand ranks must be 1..6");
  return yes(OpRole::kAnchor);
}

SupportVerdict check_gemm(const NodeSpec& n) {
  if (!rank_is(n, 0, 2) || !rank_is(n, 1, 2)) return no("A and B must be rank 2");
  if (n.has_input(2)) {
    const auto rc = n.input_rank(2);
    if (!rc || *rc > 2) return no("C must have rank 0..2");
    if (n.attr_float("beta", 1.f) != 1.f && !n.input_is_constant[2])
      return no("beta != 1 needs a constant C");
  }
  if (n.attr_float("alpha", 1.f) != 1.f && !n.input_is_constant[1])
    return no("alpha != 1 needs a constant B");
  return yes(OpRole::kAnchor);
}

// Cast to float32 from int32 (ConvInteger's result), int8, uint8 or float32:
// a oneDNN reorder, exact for these types. Casts to integers round toward
// zero in ONNX and to nearest in oneDNN: left to the reference EP.
SupportVerdict check_cast(const NodeSpec& n) {
  if (!n.has_input(0) || n.outputs.empty()) return no("missing input");
  if (n.output_dtypes.empty() || n.output_dtypes[0] != LOOM_DTYPE_FLOAT) return no("only Casts to float32 are compiled");
  const int32_t from = n.input_dtypes[0];
  if (from != LOOM_DTYPE_INT32 && from != LOOM_DTYPE_INT8 && from != LOOM_DTYPE_UINT8 && from != LOOM_DTYPE_FLOAT)
    return no("only Casts from int32, int8, uint8 or float32 are compiled");
  if (n.input_rank(0) && *n.input_rank(0) > 12) return no("rank above oneDNN's limit");
  if (n.input_shapes[0])
    for (int64_t d : *n.input_shapes[0])
      if (d == 0) return no("input 0 is empty (zero-sized); oneDNN has no empty memory");
  return yes(OpRole::kCompute);
}

SupportVerdict check_binary(const NodeSpec& n) {
  if (n.opset < 7 && n.op_type != "Max" && n.op_type != "Min")
    return no("legacy broadcast attributes (opset < 7)");
  const auto ra = n.input_rank(0), rb = n.input_rank(1);
  // With an unknown rank nothing here can be decided; the builder checks the
  // same rules (rank, broadcasting of the first operand) on concrete shapes.
  if (!ra || !rb) return yes(OpRole::kBinary);
  if (std::max(*ra, *rb) > 6) return no("rank above 6");
  // oneDNN broadcasts only the second operand: reject shapes where both
  // operands broadcast, or (for Sub/Div) where the first one must.
  const auto& a = *n.input_shapes[0];
  const auto& b = *n.input_shapes[1];
  const size_t r = std::max(a.size(), b.size());
  bool a_broadcasts = a.size() < r, b_broadcasts = b.size() < r;
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da == db) continue;
    if (da == 1) a_broadcasts = true;
    else if (db == 1) b_broadcasts = true;
    else if (da > 0 && db > 0) return no("shapes do not broadcast");
    // Unknown sizes (symbolic dims): whichever operand broadcasts at run
    // time, the builder expands it on the concrete shapes, and a post-op
    // fuses only an operand that broadcasts into the result.
  }
  if (a_broadcasts && b_broadcasts) return no("both operands broadcast");
  const bool commutative = n.op_type == "Add" || n.op_type == "Mul" || n.op_type == "Max" || n.op_type == "Min";
  if (a_broadcasts && !commutative) return no("the first operand broadcasts");
  return yes(OpRole::kBinary);
}

SupportVerdict check_softmax(const NodeSpec& n) {
  // The builder handles any rank and axis (before opset 13 as a softmax over
  // the 2-D view at axis), checking the axis against the rank it sees.
  const auto r = n.input_rank(0);
  if (!r) return yes(OpRole::kCompute);
  const int64_t rank = static_cast<int64_t>(*r);
  const int64_t axis = n.attr_int("axis", n.opset >= 13 ? -1 : 1);
  if (rank > 0 && (axis < -rank || axis >= rank)) return no("axis out of range");
  return yes(OpRole::kCompute);
}

SupportVerdict check_batch_norm(const NodeSpec& n) {
  const auto r = n.input_rank(0);
  if (!r || *r < 2 || *r > 5) return no("input rank must be 2..5");
  if (n.used_output_count() != 1) return no("training outputs are left to the reference EP");
  if (n.attr_int("training_mode", 0) != 0) return no("training_mode");
  if (n.attr_int("spatial", 1) != 1) return no("spatial=0");
  if (n.opset < 7 && n.attr_int("is_test", 0) == 0) return no("is_test=0");
  if (n.inputs.size() != 5) return no("needs 5 inputs");
  return yes(OpRole::kCompute);
}

// Shape of input i when known: inferred, else the constant's.
std::optional<std::vector<int64_t>> known_shape(const NodeSpec& n, size_t i) {
  if (i < n.input_shapes.size() && n.input_shapes[i]) return n.input_shapes[i];
  if (auto it = n.constant_shapes.find(i); it != n.constant_shapes.end()) return it->second;
  return std::nullopt;
}

SupportVerdict check_layer_norm(const NodeSpec& n) {
  const auto r = n.input_rank(0);
  if (n.used_output_count() != 1) return no("Mean / InvStdDev outputs are left to the reference EP");
  if (!r) {
    // Unknown rank: a negative axis with scale/bias of rank -axis fixes which
    // dims are normalised; the builder checks they equal x's trailing dims.
    const int64_t axis = n.attr_int("axis", -1);
    if (axis >= 0) return no("a non-negative axis needs a known rank");
    for (size_t i = 1; i <= 2; ++i) {
      if (!n.has_input(i)) continue;
      const auto s = known_shape(n, i);
      if (!s || static_cast<int64_t>(s->size()) != -axis) return no("scale/bias must match the normalised dims");
    }
    return yes(OpRole::kCompute);
  }
  if (*r < 1) return no("rank must be known");
  const int64_t rank = static_cast<int64_t>(*r);
  int64_t axis = n.attr_int("axis", -1);
  if (axis < -rank || axis >= rank) return no("axis out of range");
  if (axis < 0) axis += rank;
  // Scale and bias must cover the normalised dims exactly (no broadcasting).
  const auto& x = *n.input_shapes[0];
  for (size_t i = 1; i <= 2; ++i) {
    if (!n.has_input(i)) continue;
    const auto s = n.input_shapes[i];
    if (!s || s->size() != static_cast<size_t>(rank - axis)) return no("scale/bias must match the normalised dims");
    for (size_t k = 0; k < s->size(); ++k)
      if ((*s)[k] < 0 || (*s)[k] != x[axis + k]) return no("scale/bias must match the normalised dims");
  }
  return yes(OpRole::kCompute);
}

SupportVerdict check_concat(const NodeSpec& n) {
  const auto r = n.input_rank(0);
  if (!r || *r < 1 || *r > 6) return no("rank must be 1..6");
  if (n.inputs.size() < 1) return no("no inputs");
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!n.has_input(i) || n.input_rank(i) != r) return no("inputs must share a known rank");
    for (int64_t d : *n.input_shapes[i])
      if (d == 0) return no("empty inputs");
  }
  return yes(OpRole::kCompute);
}

// Pad: float32 data; pads, the constant value and axes known now (constant
// inputs from opset 11), so the host step is planned once (ops/pad.cpp).
SupportVerdict check_pad(const NodeSpec& n) {
  const std::string mode = n.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") return no("unknown mode '" + mode + "'");
  if (!n.input_rank(0) || *n.input_rank(0) < 1) return no("the input's rank must be known (and not 0)");
  if (n.opset >= 11) {
    if (!n.has_input(1) || !n.small_constants.count(1)) return no("pads must be a constant");
    if (n.has_input(2) && (n.input_dtypes[2] != LOOM_DTYPE_FLOAT || !n.small_constants.count(2)))
      return no("constant_value must be a float32 constant");
    if (n.has_input(3) && !n.small_constants.count(3)) return no("axes must be a constant");
  }
  return yes(OpRole::kCompute);
}

// Resize / Upsample: only where oneDNN's resampling equals ONNX exactly
// (resize_rules.h); unknown dims are -1 and checked again when built.
SupportVerdict check_resize(const NodeSpec& n) {
  const auto r = n.input_rank(0);
  if (!r || *r != 4) return no("only 4-D (NCHW) inputs of known rank are compiled");
  std::vector<int64_t> out;
  if (auto why = resize_mismatch(n, *n.input_shapes[0], &out); !why.empty()) return no(why);
  return yes(OpRole::kCompute);
}

SupportVerdict check_reshape(const NodeSpec& n) {
  if (n.op_type == "Identity") return yes(OpRole::kReshape);
  if (n.op_type == "Squeeze" || n.op_type == "Unsqueeze") {
    // Axes: an attribute before opset 13, then a constant input (Squeeze's
    // may be absent: every dim of size 1, known when built).
    if (n.opset >= 13 && n.has_input(1) && !n.small_constants.count(1)) return no("axes must be a constant");
    if (n.op_type == "Unsqueeze" && n.opset >= 13 && !n.has_input(1)) return no("Unsqueeze needs axes");
    return yes(OpRole::kReshape);
  }
  if (n.op_type == "Flatten") {
    if (!n.input_rank(0)) return no("rank must be known");
    return yes(OpRole::kReshape);
  }
  if (n.opset < 5) return no("opset < 5 Reshape");
  if (!n.small_constants.count(1)) return no("the shape must be a small constant");
  return yes(OpRole::kReshape);
}

SupportVerdict check_transpose(const NodeSpec& n) {
  const auto r = n.input_rank(0);
  // Unknown rank: the builder checks perm against the concrete rank (1..6).
  if (!r) return yes(OpRole::kCompute);
  if (*r < 1 || *r > 6) return no("rank must be 1..6");
  return yes(OpRole::kCompute);
}

// --- com.microsoft contrib ops (ONNX Runtime semantics; reference EP:
// plugins/reference/kernels/contrib_*.cpp). ONNX's shape inference has no
// schemas for them, so their outputs may carry no type: undefined is taken
// as float (they compute in the type of their float inputs).

bool float_or_unknown_outputs(const NodeSpec& n) {
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty() && n.output_dtypes[i] != LOOM_DTYPE_FLOAT && n.output_dtypes[i] != LOOM_DTYPE_UNDEFINED)
      return false;
  return true;
}

bool float_inputs(const NodeSpec& n, std::initializer_list<size_t> which) {
  for (size_t i : which)
    if (n.has_input(i) && n.input_dtypes[i] != LOOM_DTYPE_FLOAT) return false;
  return true;
}

// A 1-D parameter (bias, gamma, beta) must have `hidden` elements when both are known.
bool hidden_vector(const NodeSpec& n, size_t i, const std::optional<std::vector<int64_t>>& x) {
  if (!n.has_input(i)) return true;
  const auto s = known_shape(n, i);
  if (!s) return true;  // checked by the builder
  if (s->size() != 1) return false;
  return !x || x->empty() || x->back() < 0 || (*s)[0] < 0 || (*s)[0] == x->back();
}

SupportVerdict check_attention(const NodeSpec& n) {
  if (!float_inputs(n, {0, 1, 2})) return no("Attention: only float32 input / weights / bias are compiled");
  for (size_t i = 4; i < n.inputs.size(); ++i)
    if (n.has_input(i))
      return no(i == 4 ? "Attention with past (KV cache) is left to the reference EP"
                       : "Attention with attention_bias / past_sequence_length is left to the reference EP");
  if (n.outputs.size() > 1 && n.used_output_count() > 1) return no("Attention's present output is left to the reference EP");
  if (n.attr_int("num_heads", 0) <= 0) return no("Attention needs a positive num_heads");
  if (n.attr_int("unidirectional", 0) != 0) return no("unidirectional (causal) Attention is left to the reference EP");
  if (n.attr_int("do_rotary", 0) != 0) return no("Attention do_rotary is left to the reference EP");
  if (n.attr_int("past_present_share_buffer", 0) != 0) return no("past_present_share_buffer is left to the reference EP");
  const auto qkv = n.attr_ints("qkv_hidden_sizes");
  if (!qkv.empty() && (qkv.size() != 3 || qkv[0] != qkv[1])) return no("Attention qkv_hidden_sizes must be [D, D, D_v]");
  if (n.input_rank(0) && *n.input_rank(0) != 3) return no("Attention input must be 3-D");
  if (n.input_rank(1) && *n.input_rank(1) != 2) return no("Attention weights must be 2-D");
  if (n.has_input(3)) {
    if (n.input_dtypes[3] != LOOM_DTYPE_INT32) return no("Attention mask_index must be int32");
    const auto r = n.input_rank(3);
    if (!r) return no("Attention mask_index of unknown rank is left to the reference EP");
    if (*r != 1 && *r != 2)
      return no("Attention mask_index of rank " + std::to_string(*r) +
                " (only 1-D [batch] end positions and 2-D [batch, sequence] raw masks are compiled)");
    const auto& ms = *n.input_shapes[3];
    const auto& x = n.input_shapes[0];
    if (*r == 1 && x && (*x)[0] > 0 && ms[0] > 0 && ms[0] != (*x)[0])
      return no("Attention 1-D mask_index of length 2 * batch (end and start positions) is left to the reference EP");
  }
  return yes(OpRole::kCompute);
}

// Ids and mask int32, as ONNX Runtime and the reference EP require (the
// builder gathers int64 alike, but an EP must not accept what the others
// refuse).
SupportVerdict check_embed_layer_norm(const NodeSpec& n) {
  auto ids = [&](size_t i) { return !n.has_input(i) || n.input_dtypes[i] == LOOM_DTYPE_INT32; };
  if (!ids(0) || !ids(1) || !ids(8)) return no("EmbedLayerNormalization ids must be int32");
  if (n.has_input(7) && n.input_dtypes[7] != LOOM_DTYPE_INT32) return no("EmbedLayerNormalization mask must be int32");
  if (!float_inputs(n, {2, 3, 4, 5, 6})) return no("only float32 embeddings are compiled");
  if (!n.has_input(2) || !n.has_input(3) || !n.has_input(5)) return no("EmbedLayerNormalization needs its tables and gamma");
  for (size_t i = 0; i < n.outputs.size() && i < 3; ++i) {
    const int32_t want = i == 1 ? LOOM_DTYPE_INT32 : LOOM_DTYPE_FLOAT;
    if (!n.outputs[i].empty() && n.output_dtypes[i] != want && n.output_dtypes[i] != LOOM_DTYPE_UNDEFINED)
      return no("EmbedLayerNormalization outputs must be float32 (mask_index int32)");
  }
  if (n.input_rank(0) && *n.input_rank(0) != 2) return no("EmbedLayerNormalization input_ids must be 2-D");
  return yes(OpRole::kCompute);
}

SupportVerdict check_contrib(const NodeSpec& n) {
  const std::string& op = n.op_type;
  if (op == "EmbedLayerNormalization") return check_embed_layer_norm(n);
  if (!float_or_unknown_outputs(n)) return no("only float32 outputs are compiled");
  const auto x = n.input_shapes.empty() ? std::nullopt : n.input_shapes[0];
  if (op == "Gelu" || op == "FastGelu" || op == "BiasGelu") {
    if (!float_inputs(n, {0, 1})) return no("only float32 is compiled");
    if (op == "BiasGelu" && !n.has_input(1)) return no("BiasGelu needs its bias");
    if (!hidden_vector(n, 1, x)) return no("bias must be 1-D with the input's last dimension");
    return yes(OpRole::kUnary);
  }
  if (op == "QuickGelu") {
    if (!float_inputs(n, {0})) return no("only float32 is compiled");
    return yes(OpRole::kUnary);
  }
  if (op == "SkipLayerNormalization") {
    if (!float_inputs(n, {0, 1, 2, 3, 4})) return no("only float32 is compiled");
    if ((n.outputs.size() > 1 && !n.outputs[1].empty()) || (n.outputs.size() > 2 && !n.outputs[2].empty()))
      return no("SkipLayerNormalization mean / inv_std_var outputs are left to the reference EP");
    if (!n.has_input(2)) return no("SkipLayerNormalization needs gamma");
    for (size_t i = 2; i <= 4; ++i)
      if (!hidden_vector(n, i, x)) return no("gamma / beta / bias must be 1-D with the hidden size");
    return yes(OpRole::kCompute);
  }
  if (op == "Attention") return check_attention(n);
  if (op == "FusedConv" || op == "FusedGemm" || op == "FusedMatMul") return check_fused_anchor(n);
  if (op == "MatMulIntegerToFloat") return check_matmul_integer_to_float(n);
  return no("com.microsoft " + op + " is not implemented by cpu_onednn");
}

// Element-wise ops work on any rank (checked against oneDNN's limit when built).
SupportVerdict check_unary(const NodeSpec&) { return yes(OpRole::kUnary); }

using OpCheck = SupportVerdict (*)(const NodeSpec&);

// The op-specific check of an ONNX-domain op cpu_onednn has a kernel for;
// NULL for every other op.
OpCheck op_check(const NodeSpec& n) {
  const std::string& op = n.op_type;
  if (op == "Conv" || op == "ConvTranspose") return check_conv;
  if (op == "MatMul") return check_matmul;
  if (op == "Gemm") return check_gemm;
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool") return check_pool;
  if (op == "BatchNormalization") return check_batch_norm;
  if (op == "LayerNormalization") return check_layer_norm;
  if (op == "Softmax") return check_softmax;
  if (op == "Concat") return check_concat;
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity")
    return check_reshape;
  if (op == "Transpose") return check_transpose;
  if (op == "Resize" || op == "Upsample") return check_resize;
  if (op == "Pad") return check_pad;
  if (is_reduce_op(n)) return check_reduce;
  if (op == "LSTM" || op == "GRU") return check_recurrent;
  if (op == "Slice" || op == "Split" || op == "Gather") return check_slice;
  if (binary_algorithm_for(n)) return check_binary;
  if (eltwise_steps_for(n)) return check_unary;
  return nullptr;
}

}  // namespace

SupportVerdict check_support(const NodeSpec& n) {
  if (!n.other_attrs.empty() && is_ms_domain(n)) return no("attribute '" + n.other_attrs.front() + "' of an unhandled kind");
  if (is_ms_domain(n)) return n.has_input(0) ? check_contrib(n) : no("missing input");
  if (!n.domain.empty() && n.domain != "ai.onnx") return no("domain '" + n.domain + "'");
  const std::string& op = n.op_type;
  if (is_quantized_op(op)) {
    if (!n.other_attrs.empty()) return no("attribute '" + n.other_attrs.front() + "' of an unhandled kind");
    return check_quantized(n);
  }
  if (op == "Cast") return check_cast(n);
  // An op cpu_onednn has no kernel for says so, whatever its types.
  const OpCheck check = op_check(n);
  if (check == nullptr) return no("op not implemented by cpu_onednn");
  // Data inputs are float; Reshape's shape, Resize's roi / scales / sizes,
  // Pad's pads / value / axes and Clip's bounds are checked below.
  const size_t float_inputs =
      (op == "Reshape" || op == "Resize" || op == "Upsample" || op == "Pad" || op == "Slice" || op == "Split" ||
       op == "Gather" || op == "Squeeze" || op == "Unsqueeze" || is_reduce_op(n))
          ? 1
          : n.inputs.size();
  if (!all_float(n, float_inputs)) return no("only float32 is compiled, " + first_non_float(n, float_inputs));
  if (!n.other_attrs.empty()) return no("attribute '" + n.other_attrs.front() + "' of an unhandled kind");
  if (n.input_shapes.empty() || !n.has_input(0)) return no("missing input");
  // oneDNN has no zero-sized memory: a data input known to be empty goes to
  // another provider here rather than failing when the partition runs.
  for (size_t i = 0; i < float_inputs && i < n.input_shapes.size(); ++i)
    if (n.has_input(i) && n.input_shapes[i])
      for (int64_t d : *n.input_shapes[i])
        if (d == 0) return no("input " + std::to_string(i) + " is empty (zero-sized); oneDNN has no empty memory");
  for (const auto& s : n.input_shapes)
    if (s && s->size() > 12) return no("rank above oneDNN's limit");
  return check(n);
}

}  // namespace loom::onednn
