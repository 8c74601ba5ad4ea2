// Neural-network ops: MatMul and Gemm (ONNX's and ONNX Runtime's fused
// forms), reductions and ArgMax / ArgMin, windowed ops (window_shapes.h),
// global pools, and com.microsoft's Attention.
#include "opreg/infer/shape_rules.h"
#include "opreg/infer/window_shapes.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;

void matmul(const ir::Node& n, C& c) {
  // QLinearMatMul: (a, a_scale, a_zero_point, b, ...).
  auto x = c.shape(C::input(n, 0));
  auto w = c.shape(C::input(n, n.op_type == "QLinearMatMul" ? 3 : 1));
  if (!x || !w || x->empty() || w->empty()) return;
  Shape a = *x, b = *w;
  const bool av = a.size() == 1, bv = b.size() == 1;
  if (av) a.insert(a.begin(), known_dim(1));
  if (bv) b.push_back(known_dim(1));
  Shape out = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!av) out.push_back(a[a.size() - 2]);
  if (!bv) out.push_back(b.back());
  // MatMulIntegerToFloat (com.microsoft): float from 8-bit integers.
  // MatMulInteger: int32; QLinearMatMul: the output zero point's type.
  const DType dtype = n.op_type == "MatMulIntegerToFloat" ? DType::kFloat
                      : n.op_type == "MatMulInteger"      ? DType::kInt32
                      : n.op_type == "QLinearMatMul"      ? DType::kUndefined
                                                          : c.dtype_of(C::input(n, 0));
  c.set(n.outputs[0], dtype, out);
}

// Gemm (and com.microsoft's FusedGemm): [M, N] from A and B, transposed as told.
void gemm(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  auto w = c.shape(C::input(n, 1));
  if (!x || !w || x->size() != 2 || w->size() != 2) return;
  const DimInfo m = attr_int(n, "transA", 0) ? (*x)[1] : (*x)[0];
  const DimInfo cols = attr_int(n, "transB", 0) ? (*w)[0] : (*w)[1];
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), {m, cols});
}

// Reductions (axes: attribute before opset 18 -- ReduceSum's before 13 --
// or constant input 1) and ArgMax / ArgMin (one axis, int64 indices).
void reduce(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  const bool arg = n.op_type == "ArgMax" || n.op_type == "ArgMin";
  std::vector<int64_t> axes;
  if (arg) {
    axes.push_back(attr_int(n, "axis", 0));
  } else if (const ir::Attribute* a = n.find_attribute("axes")) {
    axes = a->ints;
  } else if (!C::input(n, 1).empty()) {
    auto k = c.const_ints(C::input(n, 1));
    if (!k) return;
    axes = *k;
  }
  const bool none = axes.empty();
  if (none && attr_int(n, "noop_with_empty_axes", 0) != 0) {
    c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), *x);
    return;
  }
  std::vector<bool> reduced(x->size(), none);
  for (int64_t a : axes) {
    auto k = normalize_axis(a, x->size());
    if (!k) return;
    reduced[*k] = true;
  }
  const bool keep = attr_int(n, "keepdims", 1) != 0;
  Shape res;
  for (size_t i = 0; i < x->size(); ++i) {
    if (!reduced[i]) res.push_back((*x)[i]);
    else if (keep) res.push_back(known_dim(1));
  }
  c.set(n.outputs[0], arg ? DType::kInt64 : c.dtype_of(C::input(n, 0)), res);
}

void window(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  auto out = window_output_shape(n, *x, c.shape(C::input(n, 1)));
  if (!out) return;
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), *out);
  if (n.op_type == "MaxPool" && n.outputs.size() > 1) c.set(n.outputs[1], DType::kInt64, *out);  // Indices
}

void global_pool(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x || x->size() < 2) return;
  Shape res = {(*x)[0], (*x)[1]};
  res.resize(x->size(), known_dim(1));
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), res);
}

// RNN, GRU, LSTM: Y [seq, directions, batch, hidden] and the last states
// [directions, batch, hidden] (batch first under layout 1).
void recurrence(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x || x->size() != 3) return;
  const int64_t hidden = attr_int(n, "hidden_size", -1);
  const ir::Attribute* dir = n.find_attribute("direction");
  const int64_t dirs = dir != nullptr && dir->s == "bidirectional" ? 2 : 1;
  const bool batch_first = attr_int(n, "layout", 0) != 0;
  const DimInfo seq = batch_first ? (*x)[1] : (*x)[0], batch = batch_first ? (*x)[0] : (*x)[1];
  const DimInfo h = hidden >= 0 ? known_dim(hidden) : unknown_dim(), d = known_dim(dirs);
  const DType dtype = c.dtype_of(C::input(n, 0));
  if (!n.outputs.empty())
    c.set(n.outputs[0], dtype, batch_first ? Shape{batch, seq, d, h} : Shape{seq, d, batch, h});
  for (size_t j = 1; j < n.outputs.size() && j < 3; ++j)
    c.set(n.outputs[j], dtype, batch_first ? Shape{batch, d, h} : Shape{d, batch, h});
}

// com.microsoft Attention: [batch, sequence, hidden] from the packed QKV
// weight (or qkv_hidden_sizes).
void ms_attention(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x || x->size() != 3) return;
  auto w = c.shape(C::input(n, 1));
  const ir::Attribute* q = n.find_attribute("qkv_hidden_sizes");
  DimInfo hidden = unknown_dim();
  if (q && q->ints.size() == 3 && q->ints[2] >= 0) hidden = known_dim(q->ints[2]);
  else if (w && w->size() == 2 && (*w)[1].value > 0 && (*w)[1].value % 3 == 0) hidden = known_dim((*w)[1].value / 3);
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), {(*x)[0], (*x)[1], hidden});
}

}  // namespace

void add_nn_shape_rules(ShapeRuleTable& t) {
  for (const char* d : {"", "com.microsoft"}) {
    t[{d, "MatMul"}] = matmul;
    t[{d, "MatMulIntegerToFloat"}] = matmul;
    t[{d, "FusedGemm"}] = gemm;
    t[{d, "Conv"}] = window;
    t[{d, "FusedConv"}] = window;
  }
  t[{"", "Gemm"}] = gemm;
  t[{"", "MaxPool"}] = window;
  t[{"", "AveragePool"}] = window;
  t[{"", "LpPool"}] = window;
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) t[{"", op}] = global_pool;
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin"})
    t[{"", op}] = reduce;
  t[{"com.microsoft", "Attention"}] = ms_attention;
  t[{"", "MatMulInteger"}] = matmul;
  t[{"", "QLinearMatMul"}] = matmul;
  for (const char* op : {"RNN", "GRU", "LSTM"}) t[{"", op}] = recurrence;
}

}  // namespace loom::opreg
