// Tensor family, shape kernels: Constant, ConstantOfShape, Shape, Size,
// Reshape, Flatten, Squeeze, Unsqueeze, Dropout. The other tensor kernels live
// in tensor_*.cpp; register_tensor_kernels below registers them all.
#include <algorithm>
#include <limits>
#include <random>

#include "common/dispatch.h"
#include "common/tensor_copy.h"
#include "common/tensor_kernels.h"
#include "kernel_families.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

constexpr int kOpen = LOOM_OPSET_OPEN_END;

// ---------------------------------------------------------------- Constant

void write_int64s(KernelContext& ctx, const std::vector<int64_t>& v, const Shape& shape) {
  sdk::Tensor out = ctx.output(0, shape, LOOM_DTYPE_INT64);
  std::copy(v.begin(), v.end(), out.mutable_data<int64_t>());
}

void constant(KernelContext& ctx) {
  const sdk::Node node = ctx.node();
  if (const sdk::ConstTensor t = node.attr_tensor("value"); t.exists()) {
    sdk::Tensor out = ctx.output(0, t.shape(), t.dtype());
    copy_all(t, out, "Constant");
    return;
  }
  if (node.has_attr("sparse_value"))
    throw sdk::Error("Constant: sparse_value is not supported", LOOM_STATUS_NOT_IMPLEMENTED);
  if (auto f = node.find_float("value_float")) {
    sdk::Tensor out = ctx.output(0, {}, LOOM_DTYPE_FLOAT);
    out.mutable_data<float>()[0] = *f;
    return;
  }
  if (auto fs = node.find_floats("value_floats")) {
    sdk::Tensor out = ctx.output(0, {static_cast<int64_t>(fs->size())}, LOOM_DTYPE_FLOAT);
    if (!fs->empty()) std::copy(fs->begin(), fs->end(), out.mutable_data<float>());
    return;
  }
  if (auto i = node.find_int("value_int")) return write_int64s(ctx, {*i}, {});
  if (auto is = node.find_ints("value_ints")) return write_int64s(ctx, *is, {static_cast<int64_t>(is->size())});
  if (auto s = node.find_string("value_string")) {
    ctx.output(0, {}, LOOM_DTYPE_STRING).set_string(0, *s);
    return;
  }
  if (auto ss = node.find_strings("value_strings")) {
    sdk::Tensor out = ctx.output(0, {static_cast<int64_t>(ss->size())}, LOOM_DTYPE_STRING);
    for (size_t k = 0; k < ss->size(); ++k) out.set_string(static_cast<int64_t>(k), (*ss)[k]);
    return;
  }
  sdk::fail_invalid("Constant: node has no value attribute");
}

void constant_of_shape(KernelContext& ctx) {
  const Shape shape = read_indices(ctx.required_input(0), "ConstantOfShape", "shape");
  for (int64_t d : shape)
    if (d < 0) sdk::fail_invalid("ConstantOfShape: negative dimension " + std::to_string(d));
  const sdk::ConstTensor value = ctx.node().attr_tensor("value");
  if (value.exists() && value.size() != 1)
    sdk::fail_invalid("ConstantOfShape: value must hold exactly one element");
  // Without a value the output is a float zero tensor.
  sdk::Tensor out = ctx.output(0, shape, value.exists() ? value.dtype() : LOOM_DTYPE_FLOAT);
  ElementFiller(value, 0, out, "ConstantOfShape").fill(0, out.size());
}

// ---------------------------------------------------------------- Shape, Size

void shape_op(KernelContext& ctx) {
  const Shape in = ctx.required_input(0).shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  auto clamp_axis = [rank](int64_t a) {
    if (a < 0) a += rank;
    return std::clamp<int64_t>(a, 0, rank);
  };
  const int64_t start = clamp_axis(ctx.node().attr_int("start", 0));
  const int64_t end = clamp_axis(ctx.node().attr_int("end", rank));
  const int64_t n = std::max<int64_t>(end - start, 0);
  int64_t* out = ctx.output(0, {n}, LOOM_DTYPE_INT64).mutable_data<int64_t>();
  for (int64_t i = 0; i < n; ++i) out[i] = in[start + i];
}

void size_op(KernelContext& ctx) {
  ctx.output(0, {}, LOOM_DTYPE_INT64).mutable_data<int64_t>()[0] = ctx.required_input(0).size();
}

// ---------------------------------------------------------------- Reshape & co

// Copies input 0 to output 0 with a new shape of the same element count.
void reshape_to(KernelContext& ctx, const Shape& shape, std::string_view op) {
  const sdk::ConstTensor x = ctx.required_input(0);
  if (element_count(shape) != x.size())
    sdk::fail_invalid(std::string(op) + ": cannot reshape " + shape_string(x.shape()) + " to " +
                      shape_string(shape));
  copy_all(x, ctx.output(0, shape, x.dtype()), op);
}

void reshape(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const bool from_attr = ctx.node().opset() < 5;
  Shape req = from_attr ? ctx.node().required_ints("shape")
                        : read_indices(ctx.required_input(1), "Reshape", "shape");
  const bool allowzero = ctx.node().attr_int("allowzero", 0) != 0;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < req.size(); ++i) {
    if (req[i] == 0 && !allowzero) {
      if (i >= in.size())
        sdk::fail_invalid("Reshape: shape has 0 at position " + std::to_string(i) + " beyond input rank " +
                          std::to_string(in.size()));
      req[i] = in[i];
    }
    if (req[i] == -1) {
      if (infer >= 0) sdk::fail_invalid("Reshape: more than one -1 in shape " + shape_string(req));
      infer = static_cast<int64_t>(i);
    } else if (req[i] < 0) {
      sdk::fail_invalid("Reshape: invalid dimension " + std::to_string(req[i]));
    } else if (req[i] != 0 && known > std::numeric_limits<int64_t>::max() / req[i]) {
      sdk::fail_invalid("Reshape: shape " + shape_string(req) + " has more elements than int64 can count");
    } else {
      known *= req[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.size() % known != 0)
      sdk::fail_invalid("Reshape: cannot infer -1 reshaping " + shape_string(in) + " to " + shape_string(req));
    req[infer] = x.size() / known;
  }
  reshape_to(ctx, req, "Reshape");
}

void flatten(KernelContext& ctx) {
  const Shape in = ctx.required_input(0).shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (axis < -rank || axis > rank)
    sdk::fail_invalid("Flatten: axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  reshape_to(ctx, {dims_product(in, 0, axis), dims_product(in, axis, in.size())}, "Flatten");
}

// Axes for Squeeze/Unsqueeze: attribute before opset 13, input 1 from 13.
std::optional<std::vector<int64_t>> axes_arg(KernelContext& ctx, std::string_view op) {
  if (ctx.node().opset() < 13) return ctx.node().find_ints("axes");
  const sdk::ConstTensor a = ctx.input(1);
  if (!a.exists()) return std::nullopt;
  return read_indices(a, op, "axes");
}

void squeeze(KernelContext& ctx) {
  const Shape in = ctx.required_input(0).shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  const auto axes = axes_arg(ctx, "Squeeze");
  if (!axes || axes->empty()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : *axes) {
      const int64_t ax = normalize_axis(a, rank, "Squeeze");
      if (in[ax] != 1)
        sdk::fail_invalid("Squeeze: dimension " + std::to_string(ax) + " of shape " + shape_string(in) +
                          " is not 1");
      drop[ax] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  reshape_to(ctx, out, "Squeeze");
}

void unsqueeze(KernelContext& ctx) {
  const Shape in = ctx.required_input(0).shape();
  const auto axes = axes_arg(ctx, "Unsqueeze");
  if (!axes) sdk::fail_invalid("Unsqueeze: axes are required");
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes->size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : *axes) {
    const int64_t ax = normalize_axis(a, out_rank, "Unsqueeze");
    if (inserted[ax]) sdk::fail_invalid("Unsqueeze: axis " + std::to_string(a) + " repeated");
    inserted[ax] = true;
  }
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? 1 : in[k++]);
  reshape_to(ctx, out, "Unsqueeze");
}

// ---------------------------------------------------------------- Dropout

// Writes "true" (1 of the mask's type) into every element of the mask.
void fill_ones(const sdk::Tensor& mask) {
  dispatch<PodTypes>(mask.dtype(), "Dropout", [&](auto tag) {
    using T = decltype(tag);
    T* p = mask.mutable_data<T>();
    for (int64_t i = 0, n = mask.size(); i < n; ++i) p[i] = static_cast<T>(1.0f);
  });
}

void dropout(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const int64_t opset = ctx.node().opset();
  float ratio = ctx.node().attr_float("ratio", 0.5f);
  bool training = false;
  if (opset >= 12) {
    ratio = 0.5f;
    if (const sdk::ConstTensor r = ctx.input(1); r.exists()) {
      dispatch<FloatTypes>(r.dtype(), "Dropout ratio", [&](auto tag) {
        using T = decltype(tag);
        ratio = static_cast<float>(r.data<T>()[0]);
      });
    }
    if (const sdk::ConstTensor t = ctx.input(2); t.exists()) training = t.data<bool>()[0];
  }
  if (ratio < 0.0f || ratio > 1.0f) sdk::fail_invalid("Dropout: ratio must be in [0, 1]");
  const bool want_mask = ctx.output_count() > 1 && !ctx.node().output_name(1).empty();
  // The mask is bool from opset 10, the input's type before.
  const int32_t mask_type = opset >= 10 ? LOOM_DTYPE_BOOL : x.dtype();
  sdk::Tensor y = ctx.output(0, x.shape(), x.dtype());
  if (!training || ratio == 0.0f) {
    copy_all(x, y, "Dropout");
    if (want_mask) fill_ones(ctx.output(1, x.shape(), mask_type));
    return;
  }
  // Training mode: drop with probability `ratio`, scale survivors.
  // With a seed, draw exactly what numpy's legacy np.random.seed(seed);
  // np.random.uniform() draws (MT19937, 53-bit doubles), so seeded runs match
  // the ONNX reference outputs.
  const auto seed = ctx.node().find_int("seed");
  std::mt19937 gen(seed ? static_cast<uint32_t>(*seed) : std::random_device{}());
  auto uniform = [&gen] {
    const uint32_t a = gen() >> 5, b = gen() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  };
  std::vector<bool> keep(static_cast<size_t>(x.size()));
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = uniform() >= static_cast<double>(ratio);
  const float scale = ratio >= 1.0f ? 0.0f : 1.0f / (1.0f - ratio);
  dispatch<FloatTypes>(x.dtype(), "Dropout", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = y.mutable_data<T>();
    for (size_t i = 0; i < keep.size(); ++i)
      py[i] = keep[i] ? static_cast<T>(static_cast<float>(px[i]) * scale) : static_cast<T>(0.0f);
  });
  if (want_mask) {
    bool* pm = ctx.output(1, x.shape(), mask_type).mutable_data<bool>();
    for (size_t i = 0; i < keep.size(); ++i) pm[i] = keep[i];
  }
}

}  // namespace

void register_tensor_shape_kernels(sdk::KernelRegistry& r) {
  r.add("", "Constant", 1, kOpen, constant);
  r.add("", "ConstantOfShape", 9, kOpen, constant_of_shape);
  r.add("", "Shape", 1, kOpen, shape_op);
  r.add("", "Size", 1, kOpen, size_op);
  r.add("", "Reshape", 1, kOpen, reshape);
  r.add("", "Flatten", 1, kOpen, flatten);
  r.add("", "Squeeze", 1, kOpen, squeeze);
  r.add("", "Unsqueeze", 1, kOpen, unsqueeze);
  r.add("", "Dropout", 1, kOpen, dropout);
}

void register_tensor_kernels(sdk::KernelRegistry& r) {
  register_tensor_shape_kernels(r);
  register_tensor_layout_kernels(r);
  register_tensor_index_kernels(r);
  register_tensor_misc_kernels(r);
  register_tensor_recent_kernels(r);
  register_tensor_resize_kernels(r);
}

}  // namespace loom::reference
