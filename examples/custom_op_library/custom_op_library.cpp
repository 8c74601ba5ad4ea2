// custom_op_library: a third-party custom-op library for Loom, built against
// the installed SDK alone. It offers no execution provider: it declares a
// domain of new ops, "example.ops", and brings CPU kernels for them, which
// the host adds to every EP that runs on host memory. A model uses the ops
// by importing the domain (opset_import "example.ops" 1).
//
// Ops:
//   ScaledTanh(X) -> Y        Y = alpha * tanh(beta * X), float;
//                             with a shape-inference function.
//   SumOfSquares(X...) -> Y   Y = sum_i X_i * X_i element-wise, for float,
//                             double, int32 and int64; dynamic output shape.
#include <loom/sdk.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace loom::sdk;

// --- ScaledTanh -----------------------------------------------------------

// Shape inference runs while the model loads (and again after graph
// rewrites), before any kernel exists: it tells the host Y's element type
// and shape so that later nodes can be checked and planned. Y is X's type
// and X's shape; when inference does not know X's rank, neither do we.
void scaled_tanh_shapes(ShapeInferenceContext& ctx) {
  const Node node = ctx.node();
  ctx.set_output(0, node.input_dtype(0), node.input_shape(0));
}

// A class kernel: the host constructs one per node and session, so the
// attributes are parsed once here rather than on every run. compute() may
// run concurrently on the same object, hence const and no mutable state.
class ScaledTanh {
 public:
  explicit ScaledTanh(const Node& node)
      // The schema marks alpha required, so the host refuses a node without
      // it at load; checking again keeps the kernel safe on its own.
      : alpha_(required_float(node, "alpha")), beta_(node.attr_float("beta", 1.0f)) {}

  void compute(KernelContext& ctx) const {
    ConstTensor x = ctx.required_input(0);
    Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    for (int64_t i = 0; i < x.size(); ++i) py[i] = alpha_ * std::tanh(beta_ * px[i]);
  }

 private:
  static float required_float(const Node& node, const char* name) {
    auto v = node.find_float(name);
    if (!v) fail_invalid("ScaledTanh node '" + std::string(node.name()) + "' lacks attribute '" + name + "'");
    return *v;
  }
  float alpha_, beta_;
};

// --- SumOfSquares ---------------------------------------------------------

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// A function kernel, instantiated once per element type: each instance is
// registered as a type variant of the op (same op, different constraint on
// T), and the host picks the one whose T matches the node's inputs.
// Without a shape-inference function the output shape is dynamic: it is
// known only here, when the kernel allocates Y. Its element type the host
// still derives from the schema (Y shares T with the inputs).
template <class T>
void sum_of_squares(KernelContext& ctx) {
  ConstTensor first = ctx.required_input(0);
  const std::vector<int64_t> shape = first.shape();
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    const std::vector<int64_t> other = ctx.required_input(i).shape();
    if (other != shape)
      fail_invalid("SumOfSquares node '" + std::string(ctx.node().name()) + "': input 0 has shape " +
                   shape_string(shape) + " but input " + std::to_string(i) + " has shape " + shape_string(other) +
                   "; all inputs must have the same shape");
  }
  Tensor y = ctx.output(0, shape, DTypeOf<T>::value);
  T* py = y.mutable_data<T>();
  const int64_t n = first.size();
  for (int64_t k = 0; k < n; ++k) py[k] = T(0);
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const T* px = ctx.input(i).data<T>();
    for (int64_t k = 0; k < n; ++k) py[k] += px[k] * px[k];
  }
}

// --- the domain -----------------------------------------------------------

std::unique_ptr<CustomOpDomain> make_domain() {
  auto d = std::make_unique<CustomOpDomain>("example.ops");

  // The schema is what the host checks every node of the domain against
  // when a model loads: the number of inputs and outputs (from the
  // formals), the element types (from the type constraints: every value
  // bound to "T" has one type, one of those allowed) and the attributes
  // (only declared ones; required ones present). A node that does not fit
  // is refused with a message naming it, before any kernel runs.
  d->op("ScaledTanh", /*since_version=*/1)
      .input("X", "T")
      .output("Y", "T")
      .type_constraint("T", {LOOM_DTYPE_FLOAT})
      .attr("alpha", LOOM_ATTR_FLOAT, /*required=*/true)
      .attr("beta", LOOM_ATTR_FLOAT)  // optional; the kernel's default is 1.0
      .infer_shapes(scaled_tanh_shapes);

  // One or more inputs, all of one type T (variadic: the last formal only).
  // No attributes and no shape inference.
  d->op("SumOfSquares", 1)
      .input("X", "T", LOOM_FORMAL_VARIADIC)
      .output("Y", "T")
      .type_constraint("T", {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64});

  // Kernels, each for a provider: "" means any EP that runs on host memory
  // (reference, cpu_onednn, ...); an EP name would limit it to that EP,
  // with that EP's memory and stream. A kernel's op must be declared above.
  d->kernel_class<ScaledTanh>("", "ScaledTanh", {{"T", {LOOM_DTYPE_FLOAT}}});
  d->kernel("", "SumOfSquares", sum_of_squares<float>, {{"T", {LOOM_DTYPE_FLOAT}}});
  d->kernel("", "SumOfSquares", sum_of_squares<double>, {{"T", {LOOM_DTYPE_DOUBLE}}});
  d->kernel("", "SumOfSquares", sum_of_squares<int32_t>, {{"T", {LOOM_DTYPE_INT32}}});
  d->kernel("", "SumOfSquares", sum_of_squares<int64_t>, {{"T", {LOOM_DTYPE_INT64}}});
  return d;
}

// Called by the host once, at init. A pure custom-op library adds no EP
// factory; an invalid declaration above would throw and fail init with the
// reason, shown by `loom plugins`.
std::unique_ptr<Plugin> create_plugin() {
  auto p = std::make_unique<Plugin>();
  p->add_custom_op_domain(make_domain());
  return p;
}

}  // namespace

LOOM_SDK_DEFINE_PLUGIN("custom_op_library", "1.0.0", create_plugin)
