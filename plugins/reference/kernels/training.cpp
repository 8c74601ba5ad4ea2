// Training optimizers of domain ai.onnx.preview.training, opset 1: Adagrad,
// Adam and Momentum (standard and Nesterov). Each takes the learning rate R,
// the update count T, then groups of n tensors (X..., G..., and one or two
// state groups), and returns n new X then the new states. The update is
// element-wise; G and the states must have X's shape (or one element, which
// is broadcast). Arithmetic is done in double and stored in X's type.
#include <cmath>
#include <string>
#include <vector>

#include "common/dispatch.h"
#include "kernel_families.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;
using sdk::Node;

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

double scalar_value(const ConstTensor& t, const char* op, const char* what) {
  if (t.size() != 1)
    sdk::fail_invalid(std::string(op) + ": input " + what + " must be a scalar, got " +
                      std::to_string(t.size()) + " elements");
  switch (t.dtype()) {
    case LOOM_DTYPE_FLOAT: return t.data<float>()[0];
    case LOOM_DTYPE_DOUBLE: return t.data<double>()[0];
    case LOOM_DTYPE_INT64: return static_cast<double>(t.data<int64_t>()[0]);
    default:
      sdk::fail_invalid(std::string(op) + ": input " + what + " has unsupported type " + sdk::dtype_name(t.dtype()));
  }
}

// Number of optimized tensors n, given that inputs are R, T and `groups`
// groups of n tensors, and outputs are `out_groups` groups of n.
size_t tensor_count(const KernelContext& ctx, const char* op, size_t groups, size_t out_groups) {
  const size_t in = ctx.input_count();
  if (in < 2 + groups || (in - 2) % groups != 0)
    sdk::fail_invalid(std::string(op) + ": expected R, T and " + std::to_string(groups) +
                      " groups of tensors, got " + std::to_string(in) + " inputs");
  const size_t n = (in - 2) / groups;
  if (ctx.output_count() != out_groups * n)
    sdk::fail_invalid(std::string(op) + ": " + std::to_string(n) + " optimized tensors need " +
                      std::to_string(out_groups * n) + " outputs, the node has " +
                      std::to_string(ctx.output_count()));
  return n;
}

// The inputs of tensor k: X = input(2 + k), then input(2 + g*n + k) for each
// further group g. Checks dtypes and sizes.
std::vector<ConstTensor> group_inputs(const KernelContext& ctx, const char* op, size_t n, size_t k,
                                      size_t groups) {
  std::vector<ConstTensor> ts;
  for (size_t g = 0; g < groups; ++g) ts.push_back(ctx.required_input(2 + g * n + k));
  const ConstTensor& x = ts[0];
  if (x.dtype() != LOOM_DTYPE_FLOAT && x.dtype() != LOOM_DTYPE_DOUBLE)
    throw sdk::Error(std::string(op) + ": optimized tensors must be float or double, got " +
                         sdk::dtype_name(x.dtype()),
                     LOOM_STATUS_NOT_IMPLEMENTED);
  for (size_t g = 1; g < groups; ++g) {
    if (ts[g].dtype() != x.dtype())
      sdk::fail_invalid(std::string(op) + ": input " + std::to_string(2 + g * n + k) + " is " +
                        sdk::dtype_name(ts[g].dtype()) + ", its X is " + sdk::dtype_name(x.dtype()));
    if (ts[g].size() != x.size() && ts[g].size() != 1)
      sdk::fail_invalid(std::string(op) + ": input " + std::to_string(2 + g * n + k) + " has " +
                        std::to_string(ts[g].size()) + " elements, its X has " + std::to_string(x.size()));
  }
  return ts;
}

// Runs `update(in, out)` per element for every tensor k, where in[g] is the
// value of group g and out[j] receives output group j's value.
template <class Update>
void run_update(KernelContext& ctx, const char* op, size_t groups, size_t out_groups, Update update) {
  const size_t n = tensor_count(ctx, op, groups, out_groups);
  for (size_t k = 0; k < n; ++k) {
    const std::vector<ConstTensor> ins = group_inputs(ctx, op, n, k, groups);
    const std::vector<int64_t> shape = ins[0].shape();
    const int64_t count = ins[0].size();
    dispatch<TypeList<float, double>>(ins[0].dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      std::vector<const T*> in(groups);
      for (size_t g = 0; g < groups; ++g) in[g] = ins[g].template data<T>();
      std::vector<T*> out(out_groups);
      for (size_t j = 0; j < out_groups; ++j) out[j] = ctx.output(j * n + k, shape, ins[0].dtype()).template mutable_data<T>();
      std::vector<double> a(groups), b(out_groups);
      for (int64_t i = 0; i < count; ++i) {
        for (size_t g = 0; g < groups; ++g) a[g] = static_cast<double>(in[g][ins[g].size() == 1 ? 0 : i]);
        update(a.data(), b.data());
        for (size_t j = 0; j < out_groups; ++j) out[j][i] = static_cast<T>(b[j]);
      }
    });
  }
}

// Adagrad: inputs R, T, X..., G..., H...; outputs X_new..., H_new....
class Adagrad {
 public:
  explicit Adagrad(const Node& node)
      : norm_(node.attr_float("norm_coefficient", 0.0f)),
        epsilon_(node.attr_float("epsilon", 1e-6f)),
        decay_(node.attr_float("decay_factor", 0.0f)) {}

  void compute(KernelContext& ctx) const {
    const double r = scalar_value(ctx.required_input(0), "Adagrad", "R");
    const double t = scalar_value(ctx.required_input(1), "Adagrad", "T");
    const double rate = r / (1 + t * decay_);
    run_update(ctx, "Adagrad", 3, 2, [&](const double* in, double* out) {
      const double x = in[0], g = norm_ * x + in[1];
      const double h = in[2] + g * g;
      out[0] = x - rate * g / (std::sqrt(h) + epsilon_);
      out[1] = h;
    });
  }

 private:
  double norm_, epsilon_, decay_;
};

// Adam: inputs R, T, X..., G..., V..., H...; outputs X_new..., V_new..., H_new....
class Adam {
 public:
  explicit Adam(const Node& node)
      : alpha_(node.attr_float("alpha", 0.9f)),
        beta_(node.attr_float("beta", 0.999f)),
        epsilon_(node.attr_float("epsilon", 1e-6f)),
        norm_(node.attr_float("norm_coefficient", 0.0f)),
        norm_post_(node.attr_float("norm_coefficient_post", 0.0f)) {}

  void compute(KernelContext& ctx) const {
    const double r = scalar_value(ctx.required_input(0), "Adam", "R");
    const double t = scalar_value(ctx.required_input(1), "Adam", "T");
    const double rate = t > 0 ? r * std::sqrt(1 - std::pow(beta_, t)) / (1 - std::pow(alpha_, t)) : r;
    run_update(ctx, "Adam", 4, 3, [&](const double* in, double* out) {
      const double x = in[0], g = norm_ * x + in[1];
      const double v = alpha_ * in[2] + (1 - alpha_) * g;
      const double h = beta_ * in[3] + (1 - beta_) * g * g;
      const double x_new = x - rate * v / (std::sqrt(h) + epsilon_);
      out[0] = (1 - norm_post_) * x_new;
      out[1] = v;
      out[2] = h;
    });
  }

 private:
  double alpha_, beta_, epsilon_, norm_, norm_post_;
};

// Momentum: inputs R, T, X..., G..., V...; outputs X_new..., V_new....
class Momentum {
 public:
  explicit Momentum(const Node& node) {
    alpha_ = required_float(node, "alpha");
    beta_ = required_float(node, "beta");
    norm_ = required_float(node, "norm_coefficient");
    const std::string mode = node.attr_string("mode", "");
    if (mode != "standard" && mode != "nesterov")
      sdk::fail_invalid("Momentum: attribute 'mode' must be 'standard' or 'nesterov', got '" + mode + "'");
    nesterov_ = mode == "nesterov";
  }

  void compute(KernelContext& ctx) const {
    const double r = scalar_value(ctx.required_input(0), "Momentum", "R");
    const double t = scalar_value(ctx.required_input(1), "Momentum", "T");
    const double beta = t > 0 ? beta_ : 1.0;  // the first iteration takes the whole gradient
    run_update(ctx, "Momentum", 3, 2, [&](const double* in, double* out) {
      const double x = in[0], g = norm_ * x + in[1];
      const double v = alpha_ * in[2] + beta * g;
      out[0] = nesterov_ ? x - r * (g + alpha_ * v) : x - r * v;
      out[1] = v;
    });
  }

 private:
  static double required_float(const Node& node, const char* name) {
    auto v = node.find_float(name);
    if (!v) sdk::fail_invalid(std::string("Momentum: missing required attribute '") + name + "'");
    return *v;
  }
  double alpha_ = 0, beta_ = 0, norm_ = 0;
  bool nesterov_ = false;
};

}  // namespace

void register_training_kernels(sdk::KernelRegistry& r) {
  r.add_class<Adagrad>(kTrainingDomain, "Adagrad", 1, LOOM_OPSET_OPEN_END);
  r.add_class<Adam>(kTrainingDomain, "Adam", 1, LOOM_OPSET_OPEN_END);
  r.add_class<Momentum>(kTrainingDomain, "Momentum", 1, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
