// Normalisations on the CUDA EP: LayerNormalization (ONNX 17, and ORT's
// contrib form in the default domain before that), SimplifiedLayerNormalization
// (RMS norm, default domain), InstanceNormalization (6+), and the
// com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization /
// EmbedLayerNormalization. Parameters have the input's element type;
// statistics outputs are float (stash_type 1, the only one claimed).
#include <string>

#include "kernels/families.h"
#include "kernels/norm.h"
#include "kernels/reduce_family.h"

namespace loom::cuda {
namespace {

const std::string kMs = "com.microsoft";

[[noreturn]] void fail(const std::string& op, const std::string& what) {
  throw sdk::Error("cuda " + op + ": " + what, LOOM_STATUS_INVALID_ARGUMENT);
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// A parameter of the input's type that broadcasts unidirectionally to
// `norm` (the normalised dims), and its map over a row's columns.
StridedMap param_map(const sdk::ConstTensor& p, int32_t dtype, const std::vector<int64_t>& norm, const std::string& op,
                     const char* what) {
  if (p.dtype() != dtype) fail(op, std::string(what) + " type differs from the input's");
  const std::vector<int64_t> ps = p.shape();
  bool ok = ps.size() <= norm.size();
  for (size_t i = 0; ok && i < ps.size(); ++i) {
    const int64_t t = norm[norm.size() - ps.size() + i];
    ok = ps[i] == t || ps[i] == 1;
  }
  if (!ok) fail(op, std::string(what) + " of shape " + shape_text(ps) + " does not broadcast to " + shape_text(norm));
  if (same_elements(norm, ps)) return StridedMap{};
  return planned(op, [&] { return broadcast_map(norm, ps); });
}

// A 1-D parameter [n] of the input's type.
const void* vector_param(const sdk::ConstTensor& p, int32_t dtype, int64_t n, const std::string& op, const char* what) {
  if (p.dtype() != dtype) fail(op, std::string(what) + " type differs from the input's");
  if (p.rank() != 1 || p.dim(0) != n)
    fail(op, std::string(what) + " must have shape [" + std::to_string(n) + "], got " + shape_text(p.shape()));
  return p.raw_data();
}

// Statistics outputs: dims[:axis] followed by ones.
std::vector<int64_t> stat_dims(const std::vector<int64_t>& in, int64_t axis) {
  std::vector<int64_t> d(in.begin(), in.begin() + axis);
  d.resize(in.size(), 1);
  return d;
}

float* float_output(sdk::KernelContext& ctx, bool wanted, size_t i, const std::vector<int64_t>& dims) {
  if (!wanted) return nullptr;
  sdk::Tensor t = ctx.output(i, dims, LOOM_DTYPE_FLOAT);
  return t.size() == 0 ? nullptr : t.mutable_data<float>();
}

void run(const NormRows& p, int32_t dtype, const std::string& op, sdk::KernelContext& ctx) {
  check_family_launch(launch_norm_rows(dtype, p, stream_of(ctx)), op, dtype);
}

// LayerNormalization and SimplifiedLayerNormalization: rows over dims
// [axis, rank). LayerNorm's Scale and B broadcast to those dims; the
// simplified form's scale is read element for element.
class LayerNormKernel {
 public:
  LayerNormKernel(const sdk::Node& node, const EpContext&)
      : op_(node.op_type()),
        simplified_(op_ == "SimplifiedLayerNormalization" || op_ == "RMSNormalization"),
        axis_(node.attr_int("axis", -1)),
        epsilon_(node.attr_float("epsilon", 1e-5f)), want_mean_(!simplified_ && names_output(node, 1)),
        want_inv_(names_output(node, simplified_ ? 1 : 2)) {}

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0), scale = ctx.required_input(1);
    const std::vector<int64_t> in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    if (rank == 0) fail(op_, "input must have rank >= 1");
    const int64_t axis = normalize_axis(axis_, rank, op_);
    const std::vector<int64_t> norm(in.begin() + axis, in.end());
    NormRows p;
    p.rows = element_count(std::vector<int64_t>(in.begin(), in.begin() + axis), "cuda " + op_ + " rows");
    p.cols = element_count(norm, "cuda " + op_ + " row");
    p.x = x.raw_data();
    p.gamma = scale.raw_data();
    if (simplified_) {
      if (scale.dtype() != x.dtype()) fail(op_, "scale type differs from the input's");
      if (scale.size() != p.cols || scale.rank() > norm.size())
        fail(op_, "scale of shape " + shape_text(scale.shape()) + " does not match the normalized dims " +
                      shape_text(norm));
    } else {
      p.gamma_map = param_map(scale, x.dtype(), norm, op_, "Scale");
      sdk::ConstTensor bias = ctx.input(2);
      if (bias.exists()) {
        p.beta_map = param_map(bias, x.dtype(), norm, op_, "B");
        p.beta = bias.raw_data();
      }
    }
    p.simplified = simplified_;
    p.epsilon = epsilon_;
    sdk::Tensor y = ctx.output(0, in, x.dtype());
    p.y = y.raw_mutable_data();
    p.mean = float_output(ctx, want_mean_, 1, stat_dims(in, axis));
    p.inv_std = float_output(ctx, want_inv_, simplified_ ? 1 : 2, stat_dims(in, axis));
    run(p, x.dtype(), op_, ctx);
  }

 private:
  std::string op_;
  bool simplified_;
  int64_t axis_;
  float epsilon_;
  bool want_mean_, want_inv_;
};

// InstanceNormalization: per (n, c) over the spatial dims; scale and B [C].
class InstanceNormKernel {
 public:
  InstanceNormKernel(const sdk::Node& node, const EpContext&) : epsilon_(node.attr_float("epsilon", 1e-5f)) {}

  void compute(sdk::KernelContext& ctx) const {
    const std::string op = "InstanceNormalization";
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    if (in.size() < 2) fail(op, "input must have rank >= 2, got " + shape_text(in));
    NormRows p;
    p.channels = in[1];
    p.rows = sdk::checked_mul(in[0], in[1], "cuda " + op + " rows");
    p.cols = element_count(std::vector<int64_t>(in.begin() + 2, in.end()), "cuda " + op + " row");
    p.x = x.raw_data();
    p.gamma = vector_param(ctx.required_input(1), x.dtype(), p.channels, op, "scale");
    p.beta = vector_param(ctx.required_input(2), x.dtype(), p.channels, op, "B");
    p.epsilon = epsilon_;
    sdk::Tensor y = ctx.output(0, in, x.dtype());
    p.y = y.raw_mutable_data();
    run(p, x.dtype(), op, ctx);
  }

 private:
  float epsilon_;
};

// SkipLayerNormalization / SkipSimplifiedLayerNormalization (com.microsoft):
// s = input + skip (+ bias) normalised over the last dim. skip has the
// input's shape or its trailing dims after leading 1s ([1, S, H], [S, H]),
// read as skip[i % skip_size]. Outputs: output, mean and inv_std_var
// ([..., 1], float; mean 0 when simplified), input_skip_bias_sum.
class SkipLayerNormKernel {
 public:
  SkipLayerNormKernel(const sdk::Node& node, const EpContext&)
      : op_(node.op_type()), simplified_(op_ == "SkipSimplifiedLayerNormalization"),
        epsilon_(node.attr_float("epsilon", 1e-12f)), want_mean_(names_output(node, 1)),
        want_inv_(names_output(node, 2)), want_sum_(names_output(node, 3)) {}

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0), skip = ctx.required_input(1);
    const std::vector<int64_t> in = x.shape(), ss = skip.shape();
    if (in.empty()) fail(op_, "input must have rank >= 1");
    if (skip.dtype() != x.dtype()) fail(op_, "skip element type differs from the input's");
    check_skip(in, ss);
    const int64_t hidden = in.back();
    NormRows p;
    p.cols = hidden;
    const int64_t total = element_count(in, "cuda " + op_ + " input");
    p.rows = hidden == 0 ? 0 : total / hidden;
    p.x = x.raw_data();
    p.skip = skip.raw_data();
    p.skip_size = element_count(ss, "cuda " + op_ + " skip");
    p.gamma = vector_param(ctx.required_input(2), x.dtype(), hidden, op_, "gamma");
    if (!simplified_ && ctx.input(3).exists()) p.beta = vector_param(ctx.input(3), x.dtype(), hidden, op_, "beta");
    const size_t bias_index = simplified_ ? 3 : 4;
    if (ctx.input(bias_index).exists()) p.bias = vector_param(ctx.input(bias_index), x.dtype(), hidden, op_, "bias");
    p.simplified = simplified_;
    p.epsilon = epsilon_;
    sdk::Tensor y = ctx.output(0, in, x.dtype());
    p.y = y.raw_mutable_data();
    std::vector<int64_t> stats = in;
    stats.back() = 1;
    p.mean = float_output(ctx, want_mean_, 1, stats);
    p.inv_std = float_output(ctx, want_inv_, 2, stats);
    if (want_sum_) p.sum = ctx.output(3, in, x.dtype()).raw_mutable_data();
    if (total == 0) return;
    run(p, x.dtype(), op_, ctx);
  }

 private:
  void check_skip(const std::vector<int64_t>& in, const std::vector<int64_t>& ss) const {
    size_t lead = 0;
    while (lead + 1 < ss.size() && ss[lead] == 1) ++lead;
    bool ok = !ss.empty() && ss.size() <= in.size();
    for (size_t i = 0; ok && i < ss.size() - lead; ++i) ok = ss[ss.size() - 1 - i] == in[in.size() - 1 - i];
    if (!ok || ss.back() != in.back())
      fail(op_, "skip of shape " + shape_text(ss) + " must match input " + shape_text(in) +
                    " or its trailing dims (e.g. [1, S, H] or [S, H])");
  }

  std::string op_;
  bool simplified_;
  float epsilon_;
  bool want_mean_, want_inv_, want_sum_;
};

// Claim check: float statistics, parameters of the input's type.
std::string layer_norm_supported(const sdk::Node& node) {
  if (node.attr_int("stash_type", 1) != 1) return "stash_type other than float (1)";
  for (size_t i = 1; i < node.input_count(); ++i) {
    const int32_t d = node.input_dtype(i);
    if (!node.input_name(i).empty() && d != LOOM_DTYPE_UNDEFINED && node.input_dtype(0) != LOOM_DTYPE_UNDEFINED &&
        d != node.input_dtype(0))
      return "input " + std::to_string(i) + " type differs from the input's";
  }
  return {};
}

std::string rms_norm_supported(const sdk::Node& node) {
  const auto x = node.input_shape(0), scale = node.input_shape(1);
  if (!x || !scale) return "the input and scale shapes must be known";
  const int64_t rank = static_cast<int64_t>(x->size());
  int64_t axis = node.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return "axis out of range";
  int64_t cols = 1, scale_count = 1;
  for (int64_t i = axis; i < rank; ++i) cols = (*x)[static_cast<size_t>(i)] < 0 ? -1 : cols * (*x)[static_cast<size_t>(i)];
  for (int64_t d : *scale) scale_count = d < 0 ? -1 : scale_count * d;
  if (cols < 0 || scale_count != cols || scale->size() > static_cast<size_t>(rank - axis))
    return "scale must have the normalized dims' shape (a broadcast scale runs on another provider)";
  return layer_norm_supported(node);
}

}  // namespace

void register_norm_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  // Opsets 1-16: ONNX Runtime's contrib LayerNormalization in the default
  // domain, same semantics (the reference serves it too).
  t.add<LayerNormKernel>("", "LayerNormalization", 1, kOpen, {{"T", kFloat3Types}}, layer_norm_supported);
  t.add<LayerNormKernel>("", "SimplifiedLayerNormalization", 1, kOpen, {{"T", kFloat3Types}}, layer_norm_supported);
  // ONNX's RMSNormalization-23 is the simplified form with Y only; a scale
  // that broadcasts rather than matching the normalized dims is declined.
  t.add<LayerNormKernel>("", "RMSNormalization", 23, kOpen, {{"T", kFloat3Types}, {"V", kFloat3Types}},
                         rms_norm_supported);
  t.add<InstanceNormKernel>("", "InstanceNormalization", 6, kOpen, {{"T", kFloat3Types}}, layer_norm_supported);
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"})
    t.add<SkipLayerNormKernel>(kMs, op, 1, kOpen, {{"T", kFloat3Types}}, layer_norm_supported);
  register_embed_layer_norm_kernels(t);
}

}  // namespace loom::cuda
