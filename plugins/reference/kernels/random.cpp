// Random generators: RandomUniform, RandomNormal, RandomUniformLike,
// RandomNormalLike (opset 1) and Bernoulli (opset 15).
//
// With a `seed` attribute a node gives the same output on every run; without
// one, every run draws new numbers (see common/random_engine.h). The numbers
// are not numpy's, so the ONNX suite's expected values cannot be matched.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/dispatch.h"
#include "common/random_engine.h"
#include "kernel_families.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
using sdk::Node;

using RandomFloatTypes = TypeList<float, double, Float16>;

bool is_random_float(int32_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE || dtype == LOOM_DTYPE_FLOAT16;
}

int32_t checked_dtype(int64_t dtype, const char* op) {
  if (!is_random_float(static_cast<int32_t>(dtype)))
    throw sdk::Error(std::string(op) + ": output dtype " + sdk::dtype_name(static_cast<int32_t>(dtype)) +
                         " is not supported (float16, float or double)",
                     dtype == LOOM_DTYPE_BFLOAT16 ? LOOM_STATUS_NOT_IMPLEMENTED : LOOM_STATUS_INVALID_ARGUMENT);
  return static_cast<int32_t>(dtype);
}

enum class Distribution { kUniform, kNormal };

// Shared by the four generators: distribution parameters (low/high or
// mean/scale), seed, and where the output's shape and dtype come from.
class RandomGenerator {
 public:
  RandomGenerator(const Node& node, Distribution dist, bool like) : dist_(dist), like_(like) {
    op_ = std::string(node.op_type());
    if (dist == Distribution::kUniform) {
      a_ = node.attr_float("low", 0.0f);
      b_ = node.attr_float("high", 1.0f);
      if (!(a_ <= b_))
        sdk::fail_invalid(op_ + ": low (" + std::to_string(a_) + ") must not exceed high (" + std::to_string(b_) + ")");
    } else {
      a_ = node.attr_float("mean", 0.0f);
      b_ = node.attr_float("scale", 1.0f);
    }
    seed_ = node.find_float("seed");
    if (like) {
      if (auto dt = node.find_int("dtype")) dtype_ = checked_dtype(*dt, op_.c_str());
    } else {
      dtype_ = checked_dtype(node.attr_int("dtype", LOOM_DTYPE_FLOAT), op_.c_str());
      shape_ = node.required_ints("shape");
      for (int64_t d : shape_)
        if (d < 0) sdk::fail_invalid(op_ + ": negative dimension " + std::to_string(d) + " in attribute 'shape'");
    }
  }

  void compute(KernelContext& ctx) const {
    std::vector<int64_t> shape = shape_;
    int32_t dtype = dtype_;
    if (like_) {
      const sdk::ConstTensor x = ctx.required_input(0);
      shape = x.shape();
      if (dtype == LOOM_DTYPE_UNDEFINED) dtype = checked_dtype(x.dtype(), op_.c_str());
    }
    sdk::Tensor y = ctx.output(0, shape, dtype);
    const int64_t n = y.size();
    random::Engine engine(random::call_seed(seed_));
    dispatch<RandomFloatTypes>(dtype, op_, [&](auto tag) {
      using T = decltype(tag);
      T* py = y.mutable_data<T>();
      for (int64_t i = 0; i < n; ++i) {
        if (dist_ == Distribution::kNormal) {
          py[i] = static_cast<T>(a_ + b_ * engine.normal());
        } else {
          T v = static_cast<T>(a_ + (b_ - a_) * engine.uniform());
          // Rounding to T may reach `high`; keep the interval half-open.
          if constexpr (std::is_floating_point_v<T>) {
            if (b_ > a_ && static_cast<double>(v) >= b_) v = std::nextafter(static_cast<T>(b_), static_cast<T>(a_));
          }
          py[i] = v;
        }
      }
    });
  }

 private:
  Distribution dist_;
  bool like_;
  std::string op_;
  double a_ = 0, b_ = 1;
  std::optional<float> seed_;
  int32_t dtype_ = LOOM_DTYPE_UNDEFINED;
  std::vector<int64_t> shape_;
};

struct RandomUniform : RandomGenerator {
  explicit RandomUniform(const Node& n) : RandomGenerator(n, Distribution::kUniform, false) {}
};
struct RandomNormal : RandomGenerator {
  explicit RandomNormal(const Node& n) : RandomGenerator(n, Distribution::kNormal, false) {}
};
struct RandomUniformLike : RandomGenerator {
  explicit RandomUniformLike(const Node& n) : RandomGenerator(n, Distribution::kUniform, true) {}
};
struct RandomNormalLike : RandomGenerator {
  explicit RandomNormalLike(const Node& n) : RandomGenerator(n, Distribution::kNormal, true) {}
};

// Bernoulli: 1 with probability p (the input element), else 0; output dtype
// from the `dtype` attribute or the input's.
class Bernoulli {
 public:
  explicit Bernoulli(const Node& node) : seed_(node.find_float("seed")) {
    if (auto dt = node.find_int("dtype")) dtype_ = static_cast<int32_t>(*dt);
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    std::vector<double> p(static_cast<size_t>(x.size()));
    dispatch<RandomFloatTypes>(x.dtype(), "Bernoulli", [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<double>(static_cast<compute_t<T>>(px[i]));
    });
    const int32_t dtype = dtype_ == LOOM_DTYPE_UNDEFINED ? x.dtype() : dtype_;
    random::Engine engine(random::call_seed(seed_));
    sdk::Tensor y = ctx.output(0, x.shape(), dtype);
    dispatch<PodTypes>(dtype, "Bernoulli", [&](auto tag) {
      using T = decltype(tag);
      T* py = y.mutable_data<T>();
      // u < p: never for p <= 0 (or NaN), always for p >= 1.
      for (size_t i = 0; i < p.size(); ++i) py[i] = static_cast<T>(engine.uniform() < p[i] ? 1.0f : 0.0f);
    });
  }

 private:
  std::optional<float> seed_;
  int32_t dtype_ = LOOM_DTYPE_UNDEFINED;
};

}  // namespace

void register_random_kernels(sdk::KernelRegistry& r) {
  r.add_class<RandomUniform>("", "RandomUniform", 1, LOOM_OPSET_OPEN_END);
  r.add_class<RandomNormal>("", "RandomNormal", 1, LOOM_OPSET_OPEN_END);
  r.add_class<RandomUniformLike>("", "RandomUniformLike", 1, LOOM_OPSET_OPEN_END);
  r.add_class<RandomNormalLike>("", "RandomNormalLike", 1, LOOM_OPSET_OPEN_END);
  r.add_class<Bernoulli>("", "Bernoulli", 15, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
