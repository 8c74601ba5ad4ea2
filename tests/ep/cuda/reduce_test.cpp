// The CUDA EP's reduction family against the reference EP: every ReduceX op
// over first / last / middle / non-contiguous / all / no axes, keepdims 0
// and 1, the attribute (opset 11, 13) and input (13 for ReduceSum, 18)
// forms, noop_with_empty_axes, reduced sizes above 1024 and empty ones;
// ArgMax / ArgMin with ties, NaNs and select_last_index; TopK largest and
// smallest with ties, k = axis length and the radix-sort path; CumSum
// exclusive / reverse on each axis; Softmax / LogSoftmax before and from
// opset 13 on each axis with rows longer than 1024. float, float16 and the
// integer (and double) types each op claims, odd sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;
using Dims = std::vector<int64_t>;

constexpr Tolerance kFloatTol{1e-4, 1e-5};
constexpr Tolerance kHalfReduceTol{1e-2, 1e-2};
constexpr Tolerance kExact{0, 0};

int32_t onnx_type(DType t) { return static_cast<int32_t>(t); }
bool is_integer(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

// One model under test: graph inputs with their values, int64 initializers
// for shape operands, nodes, and outputs without declared shapes.
class Model {
 public:
  explicit Model(int64_t opset) : m_(opset) {}
  Model& in(const std::string& name, const Tensor& t) {
    m_.input(name, onnx_type(t.dtype()), t.dims());
    inputs_[name] = t;
    return *this;
  }
  Model& ints(const std::string& name, const Dims& dims, const std::vector<int64_t>& v) {
    m_.int64_initializer(name, dims, v);
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
    return m_.node(op, inputs, outputs);
  }
  // An integer result of a node that reads only integers is cast to float
  // first (cast_integers): placement.cpp leaves such a node, when its result
  // only leaves the graph, to a host provider as shape arithmetic.
  Model& out(const std::string& name, DType type, bool cast_integers = false) {
    std::string graph_name = name;
    if (cast_integers && is_integer(type)) {
      graph_name = name + "_as_float";
      testing::add_int_attr(m_.node("Cast", {name}, {graph_name}), "to", kFloat);
      type = DType::kFloat;
    }
    auto* vi = m_.proto().mutable_graph()->add_output();
    vi->set_name(graph_name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx_type(type));
    return *this;
  }
  void check(const std::string& what, Tolerance tol) const { expect_matches_reference(m_.bytes(), inputs_, tol, what); }

 private:
  testing::ModelBuilder m_;
  std::map<std::string, Tensor> inputs_;
};

std::string text(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// Values in [-2, 2] on a grid of 0.5 (many ties), NaN every 97th element
// when asked; exact in float16.
Tensor tied(DType type, const Dims& dims, uint32_t seed, bool nans = false) {
  std::vector<float> v = random_floats(static_cast<size_t>(count_of(dims)), seed, -2.f, 2.f);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = std::round(v[i] * 2.f) / 2.f;
    if (nans && i % 97 == 5) v[i] = std::numeric_limits<float>::quiet_NaN();
  }
  if (type == DType::kFloat) return Tensor::from_vector(type, dims, v);
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = to_half(v[i]);
  return Tensor::from_vector(type, dims, h);
}

// --- ReduceX ---

struct ReduceOpCase {
  const char* op;
  const char* input;  // x: [-1, 1]; p: positive; q: near 1 (products stay finite)
};
const ReduceOpCase kFloatReduceOps[] = {
    {"ReduceSum", "x"}, {"ReduceMean", "x"},      {"ReduceMax", "x"},        {"ReduceMin", "x"},
    {"ReduceL1", "x"},  {"ReduceL2", "x"},        {"ReduceSumSquare", "x"},  {"ReduceLogSumExp", "x"},
    {"ReduceLogSum", "p"}, {"ReduceProd", "q"}};

// Whether `op` takes its axes as input 1 at `opset`.
bool axes_input(const std::string& op, int64_t opset) { return opset >= (op == "ReduceSum" ? 13 : 18); }

// Every op of `ops` on the same inputs over `axes` (nullptr: no axes given).
void check_reduce_ops(DType type, const Dims& dims, const std::vector<int64_t>* axes, bool keepdims, int64_t opset,
                      const std::vector<ReduceOpCase>& ops, Tolerance tol, int64_t noop = -1) {
  Model m(opset);
  const bool ints = is_integer(type);
  m.in("x", ints ? random_tensor(type, dims, 1, -3, 3) : random_tensor(type, dims, 1, -1, 1));
  m.in("p", random_tensor(type, dims, 2, 0.1f, 1.f));
  m.in("q", ints ? random_tensor(type, dims, 3, -1.4f, 1.4f) : random_tensor(type, dims, 3, 0.9f, 1.1f));
  if (axes && !axes->empty()) m.ints("axes", {static_cast<int64_t>(axes->size())}, *axes);
  for (const ReduceOpCase& c : ops) {
    const std::string y = std::string(c.op) + "_y";
    const bool as_input = axes_input(c.op, opset) && axes && !axes->empty();
    auto& n = as_input ? m.node(c.op, {c.input, "axes"}, {y}) : m.node(c.op, {c.input}, {y});
    testing::add_int_attr(n, "keepdims", keepdims ? 1 : 0);
    if (!axes_input(c.op, opset) && axes && !axes->empty()) testing::add_ints_attr(n, "axes", *axes);
    if (noop >= 0) testing::add_int_attr(n, "noop_with_empty_axes", noop);
    m.out(y, type, ints);
  }
  m.check(std::string(dtype_name(type)) + " " + text(dims) + " axes " + (axes ? text(*axes) : "none") + " keepdims " +
              std::to_string(keepdims) + " opset " + std::to_string(opset),
          tol);
}

const std::vector<std::vector<int64_t>> kAxesSets = {{0}, {-1}, {1}, {0, 2}, {}, {1, -1}};
const std::vector<ReduceOpCase> kAllReduceOps(std::begin(kFloatReduceOps), std::end(kFloatReduceOps));

TEST(CudaReduce, EveryOpEveryAxesSetOpset18) {
  LOOM_SKIP_WITHOUT_GPU();
  for (const auto& axes : kAxesSets)
    for (bool keep : {false, true}) check_reduce_ops(DType::kFloat, {3, 37, 129}, &axes, keep, 18, kAllReduceOps, kFloatTol);
  check_reduce_ops(DType::kFloat, {3, 37, 129}, nullptr, false, 18, kAllReduceOps, kFloatTol);
}

TEST(CudaReduce, LargeAndStridedReductions) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<int64_t> last = {1}, first = {0}, outer = {0, 2};
  check_reduce_ops(DType::kFloat, {4, 3001}, &last, false, 18, kAllReduceOps, kFloatTol);
  check_reduce_ops(DType::kFloat, {2501, 3}, &first, true, 18, kAllReduceOps, kFloatTol);
  check_reduce_ops(DType::kFloat, {41, 3, 51}, &outer, false, 18, kAllReduceOps, kFloatTol);
  check_reduce_ops(DType::kFloat, {5, 7}, &last, true, 18, kAllReduceOps, kFloatTol);
}

TEST(CudaReduce, AttributeAxesOpsets11And13) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int64_t opset : {11, 13})
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0}, {-1}, {0, 2}, {}})
      check_reduce_ops(DType::kFloat, {3, 37, 129}, &axes, opset == 11, opset, kAllReduceOps, kFloatTol);
}

TEST(CudaReduce, NoopWithEmptyAxes) {
  LOOM_SKIP_WITHOUT_GPU();
  // No axes input: noop 1 reduces nothing (each output its one element),
  // noop 0 everything; opset 13 for ReduceSum's input form.
  for (int64_t noop : {0, 1}) {
    check_reduce_ops(DType::kFloat, {3, 5, 7}, nullptr, true, 18, kAllReduceOps, kFloatTol, noop);
    check_reduce_ops(DType::kFloat, {3, 5, 7}, nullptr, false, 13, {{"ReduceSum", "x"}}, kFloatTol, noop);
  }
}

TEST(CudaReduce, EmptyReductionsAndOutputs) {
  LOOM_SKIP_WITHOUT_GPU();
  // Reducing a dim of size 0 gives each op's identity (Mean NaN).
  const std::vector<ReduceOpCase> ops = {{"ReduceSum", "x"}, {"ReduceMean", "x"}, {"ReduceProd", "x"},
                                         {"ReduceL1", "x"},  {"ReduceL2", "x"},   {"ReduceSumSquare", "x"}};
  const std::vector<int64_t> middle = {1}, last = {-1};
  check_reduce_ops(DType::kFloat, {3, 0, 5}, &middle, true, 18, ops, kFloatTol);
  check_reduce_ops(DType::kFloat, {0, 5}, &last, false, 18, kAllReduceOps, kFloatTol);
}

TEST(CudaReduce, Float16AndDouble) {
  LOOM_SKIP_WITHOUT_GPU();
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{-1}, {0, 2}, {}, {0}}) {
    check_reduce_ops(DType::kFloat16, {3, 37, 129}, &axes, true, 18, kAllReduceOps, kHalfReduceTol);
    check_reduce_ops(DType::kDouble, {3, 37, 129}, &axes, false, 18, kAllReduceOps, {1e-9, 1e-12});
  }
}

TEST(CudaReduce, Integers) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<ReduceOpCase> ops = {{"ReduceSum", "x"}, {"ReduceMean", "x"}, {"ReduceMax", "x"},
                                         {"ReduceMin", "x"}, {"ReduceL1", "x"},   {"ReduceSumSquare", "x"},
                                         {"ReduceProd", "q"}};  // q in {-1, 0, 1}: products stay exact
  for (DType type : {DType::kInt32, DType::kInt64})
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0}, {-1}, {0, 2}, {}}) {
      check_reduce_ops(type, {3, 37, 129}, &axes, true, 18, ops, kExact);
      check_reduce_ops(type, {3, 37, 129}, &axes, false, 11, ops, kExact);
    }
}

// --- ArgMax / ArgMin ---

void check_arg(const std::string& op, const Tensor& x, int64_t axis, bool keepdims, int64_t opset, int64_t last) {
  Model m(opset);
  m.in("x", x);
  auto& n = m.node(op, {"x"}, {"y"});
  testing::add_int_attr(n, "axis", axis);
  testing::add_int_attr(n, "keepdims", keepdims ? 1 : 0);
  if (last >= 0) testing::add_int_attr(n, "select_last_index", last);
  m.out("y", DType::kInt64, is_integer(x.dtype()));
  m.check(op + " " + dtype_name(x.dtype()) + " " + text(x.dims()) + " axis " + std::to_string(axis) + " keepdims " +
              std::to_string(keepdims) + " last " + std::to_string(last) + " opset " + std::to_string(opset),
          kExact);
}

TEST(CudaReduce, ArgMaxArgMinWithTies) {
  LOOM_SKIP_WITHOUT_GPU();
  const Tensor x = tied(DType::kFloat, {3, 37, 129}, 4);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {0, 1, -1}) {
      check_arg(op, x, axis, true, 11, -1);
      for (int64_t last : {0, 1}) check_arg(op, x, axis, last == 0, 13, last);
    }
    // NaNs win; long rows take the block path; strided long rows too.
    for (int64_t last : {0, 1}) {
      check_arg(op, tied(DType::kFloat, {3, 37, 129}, 5, true), -1, true, 13, last);
      check_arg(op, tied(DType::kFloat, {4, 3001}, 6, true), 1, false, 13, last);
      check_arg(op, tied(DType::kFloat, {3001, 3}, 7, true), 0, true, 13, last);
    }
  }
}

TEST(CudaReduce, ArgMaxArgMinTypes) {
  LOOM_SKIP_WITHOUT_GPU();
  for (const char* op : {"ArgMax", "ArgMin"})
    for (int64_t last : {0, 1}) {
      check_arg(op, tied(DType::kFloat16, {5, 67}, 8), 1, true, 13, last);
      check_arg(op, tied(DType::kFloat16, {2, 2001}, 9), -1, false, 13, last);
      for (DType t : {DType::kInt32, DType::kInt64}) {
        check_arg(op, random_tensor(t, {5, 67}, 10, -3, 3), 0, true, 13, last);
        check_arg(op, random_tensor(t, {3, 1999}, 11, -3, 3), 1, false, 13, last);
      }
    }
}

// --- TopK ---

// TopK at `opset`: k from the attribute (< 10) or an initializer.
void check_topk(const Tensor& x, int64_t axis, int64_t k, int64_t opset, int64_t largest) {
  Model m(opset);
  m.in("x", x);
  ::onnx::NodeProto* n;
  if (opset < 10) {
    n = &m.node("TopK", {"x"}, {"v", "i"});
    testing::add_int_attr(*n, "k", k);
  } else {
    m.ints("k", {1}, {k});
    n = &m.node("TopK", {"x", "k"}, {"v", "i"});
  }
  testing::add_int_attr(*n, "axis", axis);
  if (largest >= 0) testing::add_int_attr(*n, "largest", largest);
  if (opset >= 11) testing::add_int_attr(*n, "sorted", 1);
  const bool ints = is_integer(x.dtype());
  m.out("v", x.dtype(), ints).out("i", DType::kInt64, ints);
  m.check("TopK " + dtype_name(x.dtype()) + " " + text(x.dims()) + " axis " + std::to_string(axis) + " k " +
              std::to_string(k) + " largest " + std::to_string(largest) + " opset " + std::to_string(opset),
          kExact);
}

TEST(CudaReduce, TopKLargestSmallestWithTies) {
  LOOM_SKIP_WITHOUT_GPU();
  const Tensor x = tied(DType::kFloat, {3, 37, 129}, 12, true);
  for (int64_t largest : {0, 1}) {
    check_topk(x, -1, 5, 11, largest);
    check_topk(x, -1, 129, 11, largest);  // k = axis length
    check_topk(x, 1, 1, 11, largest);
    check_topk(x, 0, 3, 11, largest);
    check_topk(x, 1, 0, 11, largest);     // empty result
  }
  check_topk(x, -1, 7, 10, -1);
  check_topk(x, 2, 9, 1, -1);
}

TEST(CudaReduce, TopKLongRowsAndTypes) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int64_t largest : {0, 1}) {
    // Past the shared-memory sort (2048): the segmented radix sort.
    check_topk(tied(DType::kFloat, {3, 3001}, 13, true), 1, 50, 11, largest);
    check_topk(tied(DType::kFloat, {3, 3001}, 14, true), 1, 3001, 11, largest);
    check_topk(tied(DType::kFloat, {2501, 3}, 15), 0, 7, 11, largest);
    check_topk(tied(DType::kFloat, {2, 2048}, 16, true), 1, 2048, 11, largest);
    check_topk(tied(DType::kFloat16, {5, 67}, 17), 1, 9, 11, largest);
    check_topk(tied(DType::kFloat16, {2, 2500}, 18), 1, 20, 11, largest);
    check_topk(random_tensor(DType::kDouble, {5, 67}, 19), 1, 9, 11, largest);
    for (DType t : {DType::kInt32, DType::kInt64}) {
      check_topk(random_tensor(t, {5, 67}, 20, -5, 5), 1, 11, 11, largest);
      check_topk(random_tensor(t, {2, 2600}, 21, -50, 50), 1, 30, 11, largest);
    }
  }
}

// --- CumSum ---

void check_cumsum(const Tensor& x, int64_t axis, int64_t exclusive, int64_t reverse, Tolerance tol) {
  Model m(14);
  m.in("x", x).ints("axis", {}, {axis});
  auto& n = m.node("CumSum", {"x", "axis"}, {"y"});
  testing::add_int_attr(n, "exclusive", exclusive);
  testing::add_int_attr(n, "reverse", reverse);
  m.out("y", x.dtype(), is_integer(x.dtype()));
  m.check("CumSum " + dtype_name(x.dtype()) + " " + text(x.dims()) + " axis " + std::to_string(axis) + " exclusive " +
              std::to_string(exclusive) + " reverse " + std::to_string(reverse),
          tol);
}

TEST(CudaReduce, CumSum) {
  LOOM_SKIP_WITHOUT_GPU();
  // Running sums lose a few float ulps of their largest partial sum.
  const Tolerance sums{1e-4, 1e-4};
  const Tensor x = random_tensor(DType::kFloat, {3, 37, 129}, 22);
  for (int64_t exclusive : {0, 1})
    for (int64_t reverse : {0, 1}) {
      for (int64_t axis : {0, 1, -1}) check_cumsum(x, axis, exclusive, reverse, sums);
      check_cumsum(random_tensor(DType::kFloat, {4, 1501}, 23), 1, exclusive, reverse, sums);
      check_cumsum(random_tensor(DType::kFloat, {1501, 3}, 24), 0, exclusive, reverse, sums);
      check_cumsum(random_tensor(DType::kFloat16, {5, 301}, 25), -1, exclusive, reverse, kHalfReduceTol);
      for (DType t : {DType::kInt32, DType::kInt64}) {
        check_cumsum(random_tensor(t, {5, 67}, 26, -9, 9), 0, exclusive, reverse, kExact);
        check_cumsum(random_tensor(t, {3, 1999}, 27, -9, 9), 1, exclusive, reverse, kExact);
      }
    }
}

// --- Softmax / LogSoftmax ---

void check_softmax(const std::string& op, const Tensor& x, int64_t axis, int64_t opset, Tolerance tol) {
  Model m(opset);
  m.in("x", x);
  testing::add_int_attr(m.node(op, {"x"}, {"y"}), "axis", axis);
  m.out("y", x.dtype());
  m.check(op + " " + dtype_name(x.dtype()) + " " + text(x.dims()) + " axis " + std::to_string(axis) + " opset " +
              std::to_string(opset),
          tol);
}

TEST(CudaReduce, SoftmaxAndLogSoftmax) {
  LOOM_SKIP_WITHOUT_GPU();
  const Tensor x = random_tensor(DType::kFloat, {3, 37, 129}, 28, -5, 5);
  const Tensor h = random_tensor(DType::kFloat16, {3, 37, 129}, 29, -5, 5);
  const Tensor d = random_tensor(DType::kDouble, {3, 37, 129}, 30, -5, 5);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    // Opset 11: the input coerced to 2-D at axis.
    for (int64_t axis : {0, 1, 2, -1}) check_softmax(op, x, axis, 11, kFloatTol);
    for (int64_t axis : {0, 1, -1}) {
      check_softmax(op, x, axis, 13, kFloatTol);
      check_softmax(op, h, axis, 13, kHalfTolerance);
      check_softmax(op, d, axis, 13, {1e-9, 1e-12});
    }
    check_softmax(op, h, 1, 11, kHalfTolerance);
    check_softmax(op, random_tensor(DType::kFloat, {4, 1501}, 31, -5, 5), -1, 13, kFloatTol);
    check_softmax(op, random_tensor(DType::kFloat, {1501, 3}, 32, -5, 5), 0, 13, kFloatTol);
    check_softmax(op, random_tensor(DType::kFloat, {7, 33}, 33, -5, 5), -1, 13, kFloatTol);
  }
}

}  // namespace
}  // namespace loom
