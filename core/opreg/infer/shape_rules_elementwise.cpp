// Element-wise ops: output 0 has input 0's shape (unary), or the inputs'
// numpy broadcast (binary and variadic).
#include <algorithm>

#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

// Output 0 (and the outputs in `also`) get input 0's shape and `dtype`
// (kUndefined: the type already recorded).
void same_shape(const ir::Node& n, ShapeContext& c, DType dtype) {
  auto x = c.shape(ShapeContext::input(n, 0));
  if (!x) return;
  c.set(n.outputs[0], dtype, *x);
}

void unary(const ir::Node& n, ShapeContext& c) { same_shape(n, c, c.dtype_of(ShapeContext::input(n, 0))); }

// Ops whose output type is not the input's: the element-type inference
// (element_types.h) has recorded it.
void unary_other_type(const ir::Node& n, ShapeContext& c) { same_shape(n, c, DType::kUndefined); }

// A shape value read through Identity or Cast is the same shape value.
void pass_value(const ir::Node& n, ShapeContext& c) {
  if (auto v = c.value(ShapeContext::input(n, 0))) c.set_value(n.outputs[0], *v);
}

void identity(const ir::Node& n, ShapeContext& c) {
  unary(n, c);
  pass_value(n, c);
}

void cast(const ir::Node& n, ShapeContext& c) {
  const int64_t to = attr_int(n, "to", 0);
  same_shape(n, c, to > 0 && to <= kLastDType ? static_cast<DType>(to) : DType::kUndefined);
  if (to == static_cast<int64_t>(DType::kInt64) || to == static_cast<int64_t>(DType::kInt32)) pass_value(n, c);
}

void cast_like(const ir::Node& n, ShapeContext& c) { same_shape(n, c, c.dtype_of(ShapeContext::input(n, 1))); }

void boolean(const ir::Node& n, ShapeContext& c) { same_shape(n, c, DType::kBool); }

// Dropout's optional mask has the data's shape too.
void dropout(const ir::Node& n, ShapeContext& c) {
  unary(n, c);
  auto x = c.shape(ShapeContext::input(n, 0));
  if (x && n.outputs.size() > 1) c.set(n.outputs[1], DType::kBool, *x);
}

// com.microsoft SkipLayerNormalization: output 3 (input + skip) too.
void skip_layer_norm(const ir::Node& n, ShapeContext& c) {
  unary(n, c);
  auto x = c.shape(ShapeContext::input(n, 0));
  if (x && n.outputs.size() > 3) c.set(n.outputs[3], c.dtype_of(ShapeContext::input(n, 0)), *x);
}

std::optional<Shape> broadcast_inputs(const ir::Node& n, const ShapeContext& c, size_t first) {
  std::optional<Shape> acc;
  for (size_t i = first; i < n.inputs.size(); ++i) {
    auto s = c.shape(n.inputs[i]);
    if (!s) return std::nullopt;
    acc = acc ? broadcast(*acc, *s) : *s;
  }
  return acc;
}

// Add, Sub, Mul and Div of two shape values whose dims are all known (a
// one-element value broadcasts): the computed dims are a shape value too,
// as ONNX's data propagation has them (Expand, ConstantOfShape and Reshape
// targets computed from a Shape).
void arithmetic_value(const ir::Node& n, ShapeContext& c) {
  const std::string& op = n.op_type;
  if (n.inputs.size() != 2 || (op != "Add" && op != "Sub" && op != "Mul" && op != "Div")) return;
  auto a = c.value(n.inputs[0]), b = c.value(n.inputs[1]);
  if (!a || !b || a->empty() || b->empty()) return;
  if (a->size() != b->size() && a->size() != 1 && b->size() != 1) return;
  Shape out;
  for (size_t i = 0; i < std::max(a->size(), b->size()); ++i) {
    const int64_t x = (*a)[a->size() == 1 ? 0 : i].value, y = (*b)[b->size() == 1 ? 0 : i].value;
    if (x < 0 || y < 0) return;
    int64_t r = 0;
    if (op == "Add" ? !add(x, y, &r) : op == "Sub" ? !sub(x, y, &r) : op == "Mul" ? !mul(x, y, &r) : y == 0) return;
    if (op == "Div") r = x / y;
    out.push_back(known_dim(r));
  }
  c.set_value(n.outputs[0], out);
}

void broadcasting(const ir::Node& n, ShapeContext& c) {
  arithmetic_value(n, c);
  if (auto s = broadcast_inputs(n, c, 0)) c.set(n.outputs[0], c.dtype_of(ShapeContext::input(n, 0)), *s);
}

void comparison(const ir::Node& n, ShapeContext& c) {
  if (auto s = broadcast_inputs(n, c, 0)) c.set(n.outputs[0], DType::kBool, *s);
}

void where(const ir::Node& n, ShapeContext& c) {
  if (auto s = broadcast_inputs(n, c, 0)) c.set(n.outputs[0], c.dtype_of(ShapeContext::input(n, 1)), *s);
}

// The training optimizers (ai.onnx.preview.training Adagrad, Momentum,
// Adam): inputs R, T, then groups of n tensors (X, G, then one group per
// state); outputs one group per input group but G, each like its input.
void optimizer(const ir::Node& n, ShapeContext& c) {
  if (n.inputs.size() < 2 + n.outputs.size()) return;
  const size_t per_group = n.inputs.size() - 2 - n.outputs.size();
  if (per_group == 0 || n.outputs.size() % per_group != 0) return;
  for (size_t j = 0; j < n.outputs.size(); ++j) {
    const size_t group = j / per_group;
    const std::string& in = ShapeContext::input(n, 2 + (group == 0 ? 0 : group + 1) * per_group + j % per_group);
    if (auto s = c.shape(in)) c.set(n.outputs[j], c.dtype_of(in), *s);
  }
}

void add_all(ShapeRuleTable& t, std::initializer_list<const char*> ops, ShapeRule rule,
             std::initializer_list<const char*> domains = {""}) {
  for (const char* d : domains)
    for (const char* op : ops) t[{d, op}] = rule;
}

}  // namespace

void add_elementwise_shape_rules(ShapeRuleTable& t) {
  add_all(t, {"Relu",     "Erf",        "Sqrt",        "Neg",       "Exp",        "Log",      "Tanh",
              "Sigmoid",  "Abs",        "Softmax",     "Reciprocal", "Floor",    "Ceil",
              "LeakyRelu", "Elu",       "Gelu",        "HardSigmoid", "HardSwish", "Clip",    "LogSoftmax",
              "LayerNormalization", "Not", "Sign",     "Round",     "Acos",       "Acosh",    "Asin",
              "Asinh",    "Atan",       "Atanh",       "Cos",       "Cosh",       "Sin",      "Sinh",
              "Tan",      "Softplus",   "Softsign",    "Selu",      "ThresholdedRelu", "Celu", "Mish",
              "Swish",    "Hardmax",    "Shrink",      "BitwiseNot", "Trilu",     "CumSum",   "CumProd",
              "InstanceNormalization", "LpNormalization", "MeanVarianceNormalization", "LRN",
              "BatchNormalization", "GroupNormalization", "RMSNormalization"},
          unary, {"", "com.microsoft"});
  add_all(t, {"FastGelu", "BiasGelu", "QuickGelu", "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization"},
          unary, {"", "com.microsoft"});
  add_all(t, {"SkipLayerNormalization"}, skip_layer_norm, {"", "com.microsoft"});
  add_all(t, {"Identity"}, identity);
  add_all(t, {"Dropout"}, dropout);
  add_all(t, {"IsNaN", "IsInf"}, boolean);
  add_all(t, {"Cast"}, cast);
  add_all(t, {"CastLike"}, cast_like);
  add_all(t, {"QuantizeLinear", "DequantizeLinear"}, unary_other_type);
  add_all(t, {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "PRelu", "Sum", "Mean", "BitShift",
              "BitwiseAnd", "BitwiseOr", "BitwiseXor"},
          broadcasting, {"", "com.microsoft"});
  add_all(t, {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"}, comparison,
          {"", "com.microsoft"});
  add_all(t, {"Where"}, where, {"", "com.microsoft"});
  add_all(t, {"Adagrad", "Momentum", "Adam"}, optimizer, {"ai.onnx.preview.training"});
}

}  // namespace loom::opreg
