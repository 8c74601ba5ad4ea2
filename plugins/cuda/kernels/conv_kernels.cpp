// Convolutions on the CUDA EP: Conv, com.microsoft FusedConv and
// ConvTranspose through cuDNN (kernels/conv_cudnn.h), float and float16,
// 1-D to 3-D. cuDNN pads both
// ends alike, so asymmetric pads (explicit or from auto_pad) pre-pad X into
// stream scratch, and a ConvTranspose whose pads or output_padding cuDNN
// cannot express runs unpadded into scratch and is cropped out of it
// (kernels/conv_geometry.h says how). Bias, FusedConv's residual Z and a
// ReLU run inside cuDNN's fused call where it has one; otherwise
// they are one epilogue pass over Y (kernels/conv.h). The loom.nhwc Conv
// and FusedConv (the core's channels-last layout, transform/passes/channels_last.h:
// X, Y, Z NHWC, W OHWI) are the same kernel on cuDNN's NHWC descriptors,
// claimed for the element types prefer_nhwc names (ep_options.h).
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/conv.h"
#include "kernels/conv_cudnn.h"
#include "kernels/conv_node.h"
#include "kernels/families.h"
#include "kernels/half_operands.h"
#include "kernels/kernel_support.h"

namespace loom::cuda {
namespace {

[[noreturn]] void fail(const std::string& op, const std::string& why) {
  throw sdk::Error("cuda " + op + ": " + why, LOOM_STATUS_INVALID_ARGUMENT);
}

Dims spatial_of(const Dims& d) { return Dims(d.begin() + 2, d.end()); }

Dims with_batch_channels(int64_t n, int64_t c, const Dims& spatial) {
  Dims d{n, c};
  d.insert(d.end(), spatial.begin(), spatial.end());
  return d;
}

// FusedConv's `activation` / `activation_params`, as the reference EP reads
// them. Throws std::invalid_argument on an unknown activation or a wrong
// parameter count.
ConvEpilogue fused_activation(const sdk::Node& n) {
  ConvEpilogue e;
  const auto name = n.find_string("activation");
  if (!name) return e;
  const std::vector<float> params = n.attr_floats("activation_params");
  auto take = [&](size_t count) {
    if (params.size() != count)
      throw std::invalid_argument("activation " + *name + " needs " + std::to_string(count) +
                                  " activation_params, got " + std::to_string(params.size()));
    if (count > 0) e.alpha = params[0];
    if (count > 1) e.beta = params[1];
  };
  if (*name == "Relu")
    e.activation = ConvActivation::kRelu;
  else if (*name == "Tanh")
    e.activation = ConvActivation::kTanh;
  else if (*name == "Sigmoid")
    e.activation = ConvActivation::kSigmoid;
  else if (*name == "Silu")
    e.activation = ConvActivation::kSilu;
  else if (*name == "LeakyRelu")
    e.activation = ConvActivation::kLeakyRelu, take(1);
  else if (*name == "Clip")
    e.activation = ConvActivation::kClip, take(2);
  else if (*name == "HardSigmoid")
    e.activation = ConvActivation::kHardSigmoid, take(2);
  else
    throw std::invalid_argument("unsupported activation '" + *name + "'");
  return e;
}

// fp16 mode (kernels/half_operands.h): `run(hx, hw, hy)` convolves float16
// copies of x and w into a float16 result, widened into y (`count`
// elements); W's copy is kept when it is a constant.
template <class Run>
void in_half(StreamResources& res, const HalfConstant& kept_w, bool w_constant, const sdk::ConstTensor& x,
             const sdk::ConstTensor& w, void* y, int64_t count, Run&& run) {
  const void* hx = half_copy(res, x.raw_data(), x.size(), kHalfInputSlot);
  const void* hw = half_operand(res, kept_w, w_constant, w.raw_data(), w.size(), kHalfWeightSlot);
  void* hy = res.scratch(static_cast<size_t>(count) * 2, kHalfOutputSlot);
  run(hx, hw, hy);
  widen_to_float(res, hy, y, count);
}

// Bias and the activation (and Z) over y [N, channels, spatial...] (ys in
// that order); `nhwc`: y is [N, spatial..., channels] in memory, whose
// channel is the index modulo channels (one "plane" per pixel).
void run_epilogue(const std::string& op, int32_t dtype, const ConvEpilogue& e, void* y, const sdk::ConstTensor& bias,
                  const sdk::ConstTensor& z, const Dims& ys, int64_t count, cudaStream_t s, bool nhwc = false) {
  if (!bias.exists() && !z.exists() && e.activation == ConvActivation::kIdentity) return;
  const int64_t channels = ys[1];
  const int64_t spatial = nhwc ? 1 : count / (ys[0] * channels);  // count > 0, so N and channels > 0
  check(launch_conv_epilogue(dtype, e, y, bias.exists() ? bias.raw_data() : nullptr,
                             z.exists() ? z.raw_data() : nullptr, channels, spatial, count, s),
        (op + " epilogue launch").c_str());
}

void check_same_type(const std::string& op, const sdk::ConstTensor& t, int32_t dtype, const char* what) {
  if (t.exists() && t.dtype() != dtype)
    fail(op,
         std::string(what) + " has element type " + sdk::dtype_name(t.dtype()) + ", X has " + sdk::dtype_name(dtype));
}

void check_ranks(const std::string& op, const Dims& xs, const Dims& ws) {
  if (xs.size() < 3) fail(op, "X must have rank >= 3, got " + std::to_string(xs.size()));
  if (ws.size() != xs.size()) fail(op, "W and X ranks differ");
  if (xs.size() > 5)
    throw sdk::Error("cuda " + op + ": convolutions over " + std::to_string(xs.size() - 2) +
                         " spatial dims are not supported (1 to 3)",
                     LOOM_STATUS_NOT_IMPLEMENTED);
}

// Conv and FusedConv: Y = act(conv(X, W) + B + Z).
class ConvKernel {
 public:
  ConvKernel(const sdk::Node& n, const EpContext& ep)
      : ep_(ep),
        nhwc_(n.domain() == kNhwcDomain),
        op_(nhwc_ ? "loom.nhwc " + std::string(n.op_type()) : std::string(n.op_type())),
        fused_(n.op_type() == "FusedConv"),
        group_(n.attr_int("group", 1)),
        attrs_(sdk::window_attrs_of(n, "cuda " + op_)),
        epilogue_(fused_ ? with_geometry_errors(op_, [&] { return fused_activation(n); }) : ConvEpilogue{}),
        weight_constant_(n.input_constant(1).exists()) {}

  void compute(sdk::KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0), w = ctx.required_input(1), b = ctx.input(2);
    const sdk::ConstTensor z = fused_ ? ctx.input(3) : sdk::ConstTensor();
    const int32_t dtype = x.dtype();
    check_same_type(op_, w, dtype, "W");
    check_same_type(op_, b, dtype, "B");
    check_same_type(op_, z, dtype, "Z");
    // Channels-last tensors are checked and planned in NCHW order.
    if (nhwc_ && (x.shape().size() != 4 || w.shape().size() != 4)) fail(op_, "X and W must be 4-D");
    const Dims xs = nhwc_ ? nchw_order(x.shape()) : x.shape(), ws = nhwc_ ? nchw_order(w.shape()) : w.shape();
    check_ranks(op_, xs, ws);
    if (group_ <= 0) fail(op_, "group must be positive");
    const int64_t c = xs[1], m = ws[0];
    if (c != sdk::checked_mul(ws[1], group_, "cuda " + op_ + " channels"))
      fail(op_, "X has " + std::to_string(c) + " channels, W with group " + std::to_string(group_) + " expects " +
                    std::to_string(ws[1] * group_));
    if (m % group_ != 0) fail(op_, "output channels " + std::to_string(m) + " not divisible by group");
    const Window g = sdk::resolve_window(attrs_, spatial_of(xs), spatial_of(ws), "cuda " + op_);
    const Dims ys = with_batch_channels(xs[0], m, g.out);
    if (b.exists() && b.size() != m)
      fail(op_, "B has " + std::to_string(b.size()) + " elements, expected " + std::to_string(m));
    const Dims y_shape = nhwc_ ? nhwc_order(ys) : ys;
    if (z.exists() && z.shape() != y_shape) fail(op_, "Z must have Y's shape");
    const int64_t count = element_count(ys, "cuda " + op_ + " output");
    sdk::Tensor y = ctx.output(0, y_shape, dtype);
    if (count == 0) return;
    StreamResources& res = stream_resources(ctx);
    if (x.size() == 0 || w.size() == 0) {  // no input channels: the convolution is zero
      check(cudaMemsetAsync(y.raw_mutable_data(), 0, static_cast<size_t>(count) * element_bytes(dtype), res.stream()),
            "cudaMemsetAsync");
    } else if (half_mode(ep_, dtype)) {
      in_half(res, half_w_, weight_constant_, x, w, y.raw_mutable_data(), count,
              [&](const void* hx, const void* hw, void* hy) {
                conv_forward(res, ep_, g, group_, LOOM_DTYPE_FLOAT16, xs, hx, ws, hw, ys, hy, nullptr, nhwc_);
              });
    } else {
      ConvFusion fusion;
      fusion.bias = b.exists() ? b.raw_data() : nullptr;
      fusion.z = z.exists() ? z.raw_data() : nullptr;
      fusion.relu = epilogue_.activation == ConvActivation::kRelu;
      fusion.none = epilogue_.activation == ConvActivation::kIdentity;
      if (conv_forward(res, ep_, g, group_, dtype, xs, x.raw_data(), ws, w.raw_data(), ys, y.raw_mutable_data(),
                       &fusion, nhwc_))
        return;  // bias, Z and the activation ran inside cuDNN's call
    }
    run_epilogue(op_, dtype, epilogue_, y.raw_mutable_data(), b, z, ys, count, res.stream(), nhwc_);
  }

 private:
  const EpContext& ep_;
  bool nhwc_;
  std::string op_;
  bool fused_;
  int64_t group_;
  WindowAttrs attrs_;
  ConvEpilogue epilogue_;
  bool weight_constant_;
  HalfConstant half_w_;  // fp16 mode: W as float16, when W is a constant
};

// ConvTranspose: cuDNN's backward-data convolution with W [C_in, C_out /
// group, k...] as the forward filter.
class ConvTransposeKernel {
 public:
  ConvTransposeKernel(const sdk::Node& n, const EpContext& ep)
      : ep_(ep),
        group_(n.attr_int("group", 1)),
        weight_constant_(n.input_constant(1).exists()),
        attrs_(sdk::transpose_attrs_of(n, std::string("cuda ") + kOp)) {}

  void compute(sdk::KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0), w = ctx.required_input(1), b = ctx.input(2);
    const int32_t dtype = x.dtype();
    check_same_type(kOp, w, dtype, "W");
    check_same_type(kOp, b, dtype, "B");
    const Dims xs = x.shape(), ws = w.shape();
    check_ranks(kOp, xs, ws);
    const int64_t c = xs[1];
    if (group_ <= 0 || c != ws[0] || c % group_ != 0)
      fail(kOp, "X channels " + std::to_string(c) + " must equal W dim 0 " + std::to_string(ws[0]) +
                    " and be divisible by group " + std::to_string(group_));
    const int64_t m = sdk::checked_mul(ws[1], group_, "cuda ConvTranspose output channels");
    const TransposeWindow g =
        sdk::resolve_conv_transpose(attrs_, spatial_of(xs), spatial_of(ws), std::string("cuda ") + kOp);
    const Dims ys = with_batch_channels(xs[0], m, g.out);
    if (b.exists() && b.size() != m)
      fail(kOp, "B has " + std::to_string(b.size()) + " elements, expected " + std::to_string(m));
    const int64_t count = element_count(ys, "cuda ConvTranspose output");
    sdk::Tensor y = ctx.output(0, ys, dtype);
    if (count == 0) return;
    StreamResources& res = stream_resources(ctx);
    if (x.size() == 0 || w.size() == 0) {  // nothing reaches Y
      check(cudaMemsetAsync(y.raw_mutable_data(), 0, static_cast<size_t>(count) * element_bytes(dtype), res.stream()),
            "cudaMemsetAsync");
    } else if (half_mode(ep_, dtype)) {
      in_half(res, half_w_, weight_constant_, x, w, y.raw_mutable_data(), count,
              [&](const void* hx, const void* hw, void* hy) {
                conv_transpose(res, ep_, g, group_, LOOM_DTYPE_FLOAT16, xs, hx, ws, hw, ys, hy);
              });
    } else {
      conv_transpose(res, ep_, g, group_, dtype, xs, x.raw_data(), ws, w.raw_data(), ys, y.raw_mutable_data());
    }
    run_epilogue(kOp, dtype, ConvEpilogue{}, y.raw_mutable_data(), b, sdk::ConstTensor(), ys, count, res.stream());
  }

 private:
  static constexpr const char* kOp = "ConvTranspose";

  const EpContext& ep_;
  int64_t group_;
  bool weight_constant_;
  TransposeAttrs attrs_;
  HalfConstant half_w_;  // fp16 mode: W as float16, when W is a constant
};

std::string conv_supported(const sdk::Node& node) {
  if (node.attr_int("group", 1) <= 0) return "group must be positive";
  return window_node_supported(node, 3, 5);
}

std::string fused_conv_supported(const sdk::Node& node) {
  try {
    fused_activation(node);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return conv_supported(node);
}

// Channels-last: 2-D, with pads cuDNN applies itself (explicit, equal at
// both ends and smaller than the dilated kernel), since the pre-pad copy
// is NCHW-only. Anything else stays NCHW (the layout phase keeps it).
std::string nhwc_conv_supported(const sdk::Node& node) {
  std::string why = node.op_type() == "FusedConv" ? fused_conv_supported(node) : conv_supported(node);
  if (!why.empty()) return why;
  const auto x = node.input_shape(0), w = node.input_shape(1);
  if (!x || x->size() != 4 || !w || w->size() != 4) return "channels-last convolutions are 2-D, with a known weight shape";
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") return {};
  if (auto_pad != "NOTSET") return "auto_pad " + auto_pad + " (channels-last takes explicit symmetric pads)";
  const std::vector<int64_t> pads = node.attr_ints("pads"), dilations = node.attr_ints("dilations");
  for (size_t d = 0; d < 2; ++d) {
    const int64_t begin = pads.size() == 4 ? pads[d] : 0, end = pads.size() == 4 ? pads[d + 2] : 0;
    const int64_t dilation = dilations.size() == 2 ? dilations[d] : 1, k = (*w)[d + 1];
    if (begin != end) return "asymmetric pads (channels-last has no pre-pad)";
    if (k < 1 || dilation < 1 || begin >= (k - 1) * dilation + 1) return "pads as large as the kernel";
  }
  return {};
}

}  // namespace

void register_nhwc_conv_kernels(KernelTable& t, const std::vector<int32_t>& types) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<ConvKernel>(kNhwcDomain, "Conv", 1, kOpen, {{"T", types}}, nhwc_conv_supported);
  t.add<ConvKernel>(kNhwcDomain, "FusedConv", 1, kOpen, {{"T", types}}, nhwc_conv_supported);
}

void register_conv_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<ConvKernel>("", "Conv", 1, kOpen, {{"T", kFloatTypes}}, conv_supported);
  t.add<ConvKernel>("com.microsoft", "FusedConv", 1, kOpen, {{"T", kFloatTypes}}, fused_conv_supported);
  t.add<ConvTransposeKernel>("", "ConvTranspose", 1, kOpen, {{"T", kFloatTypes}}, conv_supported);
}

}  // namespace loom::cuda
