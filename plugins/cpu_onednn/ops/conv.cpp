// Conv and ConvTranspose (2-D) as oneDNN (de)convolutions: layouts chosen by
// oneDNN (format_tag::any), weights packed once, bias and post-op chains.
#include <oneapi/dnnl/dnnl.hpp>

#include "compiled_partition.h"
#include "ops/conv_geometry.h"
#include "ops/depthwise.h"
#include "ops/narrow_pointwise.h"
#include "ops/op_builders.h"
#include "ops/operand_layout.h"
#include "ops/post_ops.h"

namespace loom::onednn {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

namespace {

memory::desc any_desc(const std::vector<int64_t>& dims) { return memory::desc(dims, memory::data_type::f32, tag::any); }

std::vector<int64_t> spatial(const std::vector<int64_t>& d) { return {d.begin() + 2, d.end()}; }

}  // namespace

ValueId weights_view(ProgramBuilder& b, ValueId w, int64_t group, bool transposed) {
  const std::vector<int64_t>& d = b.dims(w);  // conv: M, C/g, kh, kw; transpose: C, M/g, kh, kw
  const int64_t kh = d[2], kw = d[3];
  const ValueId p = b.plain(w);
  if (!transposed) {
    if (group == 1) return p;
    return b.view(p, {group, d[0] / group, d[1], kh, kw});
  }
  const int64_t ic_g = d[0] / group, oc_g = d[1];
  std::vector<int64_t> dims, strides;
  if (group == 1) {
    dims = {oc_g, ic_g, kh, kw};
    strides = {kh * kw, oc_g * kh * kw, kw, 1};
  } else {
    dims = {group, oc_g, ic_g, kh, kw};
    strides = {ic_g * oc_g * kh * kw, kh * kw, oc_g * kh * kw, kw, 1};
  }
  return b.alias(p, memory::desc(dims, b.desc(p).data_type(), strides), dims);
}

ConvShape conv_shape(const NodeSpec& n, const std::vector<int64_t>& x, const std::vector<int64_t>& w, bool transposed) {
  ConvShape s;
  s.group = n.attr_int("group", 1);
  const int64_t g = s.group;
  if (x.size() != 4 || w.size() != 4) n.fail("expects rank-4 input and weights");
  if (!transposed && (x[1] != w[1] * g || w[0] % g != 0))
    n.fail("input channels " + std::to_string(x[1]) + " do not match weights and group " + std::to_string(g));
  if (transposed && (x[1] != w[0] || w[0] % g != 0))
    n.fail("input channels " + std::to_string(x[1]) + " do not match weights and group " + std::to_string(g));
  const std::vector<int64_t> kernel = spatial(w);
  const auto ks = n.attr_ints("kernel_shape");
  if (!ks.empty() && ks != kernel) n.fail("kernel_shape does not match the weights");
  s.out_channels = transposed ? w[1] * g : w[0];
  if (!transposed) {
    s.window = forward_window(n, spatial(x), kernel, false);
  } else {
    sdk::TransposeAttrs t;
    t.window = window_attrs(n);
    t.output_padding = n.attr_ints("output_padding");
    t.output_shape = n.attr_ints("output_shape");
    const sdk::TransposeWindow tw = sdk::resolve_conv_transpose(t, spatial(x), kernel, error_prefix(n));
    Window& win = s.window;
    win.kernel = tw.kernel;
    win.strides = tw.strides;
    win.dilations = tw.dilations;
    win.pad_begin = tw.pad_begin;
    win.pad_end = tw.pad_end;
    win.out = tw.out;
    for (size_t i = 0; i < tw.rank(); ++i) {
      if (tw.pad_begin[i] < 0 || tw.pad_end[i] < 0 || tw.output_padding[i] < 0)
        n.fail("pads and output_padding must be non-negative");
      // oneDNN has no output padding: it is less end padding.
      win.pad_end[i] -= tw.output_padding[i];
      if (win.pad_end[i] < 0) n.fail("output_padding beyond the end padding");
      if (tw.out[i] < 1) n.fail("output size below 1");
    }
  }
  s.dst_dims = {x[0], s.out_channels, s.window.out[0], s.window.out[1]};
  return s;
}

bool is_pointwise(const ConvShape& s) {
  const Window& w = s.window;
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  return s.group == 1 && w.kernel == ones && w.strides == ones && w.dilations == ones && w.pad_begin == zeros &&
         w.pad_end == zeros;
}

std::optional<std::vector<float>> constant_conv_bias(ProgramBuilder& b, const NodeSpec& n, int64_t channels) {
  if (!n.has_input(2)) return std::vector<float>(channels, 0.f);
  const ValueId bias = b.value_of(n.inputs[2]);
  if (b.dims(bias) != std::vector<int64_t>{channels} || !b.is_constant(bias)) return std::nullopt;
  return b.constant_data(bias);
}

namespace {

// Output pixels (batch x height x width) below which a Winograd
// convolution does not pay for its weight transform soon enough. oneDNN 2.6
// transforms the weights once per program in a scalar loop (~20 ns per
// weight on one core), while the saving per run grows with the pixels: on
// ResNet-50's 3x3 convolutions the transform is paid back after 1, 6, 15
// and 127 runs at 56x56, 28x28, 14x14 and 7x7 outputs. At 28x28 and more,
// time to the first result stays below direct convolution's plus a few
// runs (bench/results/2026-11-27-winograd-first-run-cpu.md).
constexpr int64_t kWinogradMinOutputPixels = 28 * 28;

// Winograd F(4x4, 3x3) is oneDNN's for 3x3, stride-1, undilated, ungrouped
// 2-D convolutions (it declines shapes it has no kernel for). Only for
// constant weights (transformed once) and outputs large enough to repay it.
bool winograd_applies(const ProgramBuilder& b, const ConvShape& s, ValueId weights) {
  const Window& w = s.window;
  if (!b.options().winograd || s.group != 1 || w.kernel != std::vector<int64_t>{3, 3} ||
      w.strides != std::vector<int64_t>{1, 1} || w.dilations != std::vector<int64_t>{1, 1} || !b.is_constant(weights) ||
      s.dst_dims.size() != 4)
    return false;
  int64_t pixels = 1;
  for (size_t i : {size_t{0}, size_t{2}, size_t{3}})
    if (__builtin_mul_overflow(pixels, s.dst_dims[i], &pixels)) return true;
  return pixels >= kWinogradMinOutputPixels;
}

// The convolution just built as a ProgramBuilder::BandConv, when it is one
// (see there): its primitive for a band of rows keeps every choice the full
// one made (weights layout, post-ops, attributes, implementation).
// `args` are the step's (src, weights, [bias,] dst, ...).
std::optional<ProgramBuilder::BandConv> band_conv(ProgramBuilder& b, const std::vector<std::pair<int, ValueId>>& args,
                                                  const ConvShape& s,
                                                  const dnnl::convolution_forward::primitive_desc& pd,
                                                  const std::vector<PostOp>& ops, size_t used,
                                                  const std::string& label) {
  auto arg = [&](int which) -> std::optional<ValueId> {
    for (const auto& [k, v] : args)
      if (k == which) return v;
    return std::nullopt;
  };
  const ValueId x = *arg(DNNL_ARG_SRC), dst = *arg(DNNL_ARG_DST);
  const std::vector<int64_t>& xd = b.dims(x);
  if (xd.size() != 4 || xd[0] != 1 || !is_pointwise(s) || pd.src_desc() != nhwc_desc(xd) ||
      pd.dst_desc() != nhwc_desc(s.dst_dims))
    return std::nullopt;
  for (size_t i = 0; i < used; ++i)
    if (ops[i].kind != PostOp::kEltwise) return std::nullopt;
  const int64_t in_channels = xd[1], out_channels = s.out_channels, width = xd[3];
  const memory::desc weights_desc = pd.weights_desc();
  const std::optional<ValueId> bias = arg(DNNL_ARG_BIAS);
  const std::optional<memory::desc> bias_desc = bias ? std::optional<memory::desc>(pd.bias_desc()) : std::nullopt;
  const dnnl::primitive_attr attr = pd.get_primitive_attr();
  const dnnl::engine engine = b.engine();
  ProgramBuilder::BandConv band;
  band.src = x;
  band.weights = *arg(DNNL_ARG_WEIGHTS);
  band.bias = bias;
  band.dst = dst;
  band.impl = pd.impl_info_str();
  band.label = label;
  band.make = [=](int64_t rows) {
    const memory::desc src = nhwc_desc({1, in_channels, rows, width}), out = nhwc_desc({1, out_channels, rows, width});
    using Conv = dnnl::convolution_forward;
    const auto d = bias_desc ? Conv::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                          src, weights_desc, *bias_desc, out, {1, 1}, {0, 0}, {0, 0})
                             : Conv::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                          src, weights_desc, out, {1, 1}, {0, 0}, {0, 0});
    return Conv::primitive_desc(d, attr, engine);
  };
  return band;
}

template <class Primitive>
size_t build(ProgramBuilder& b, const NodeSpec& n, const Chain& chain, bool transposed) {
  const ValueId x = b.value_of(n.inputs[0]);
  const ValueId w = b.value_of(n.inputs[1]);
  const ConvShape s = conv_shape(n, b.dims(x), b.dims(w), transposed);
  const ValueId wv = weights_view(b, w, s.group, transposed);
  // Deconvolution bias is a separate binary add: oneDNN 2.6 adds it to a
  // deconvolution's dst in a scalar loop (PP-OCR det's 2x upsamplings: 69 ms
  // with bias vs 14 ms without, the add itself well under 1 ms).
  const bool bias_in_primitive = !transposed;
  const bool has_bias = n.has_input(2);
  std::optional<ValueId> bias;
  if (has_bias) {
    bias = b.value_of(n.inputs[2]);
    if (b.dims(*bias) != std::vector<int64_t>{s.out_channels}) n.fail("bias must have one value per output channel");
  }
  // No post-ops on deconvolution: oneDNN 2.6 runs it as a backward-data
  // convolution and applies post-ops afterwards in a scalar reference loop
  // (ref_deconvolution_fwd_t), ~100x slower than standalone binary / eltwise
  // primitives (PP-OCR det: 184 ms vs 2 ms for a 24-channel 2x upsampling).
  auto ops = transposed ? std::vector<PostOp>{} : plan_post_ops(b, chain, n.outputs[0], s.dst_dims, true);
  const dnnl::algorithm direct = transposed ? dnnl::algorithm::deconvolution_direct : dnnl::algorithm::convolution_direct;
  using PD = typename Primitive::primitive_desc;
  auto make_pd = [&](const memory::desc& dst, size_t& used, dnnl::algorithm alg) {
    return create_with_post_ops<PD>(b, ops, used, dst, [&](const dnnl::primitive_attr& attr, const memory::desc& out) {
      const memory::desc src = any_desc(b.dims(x)), wei = any_desc(b.dims(wv));
      const auto& win = s.window;
      if (has_bias && bias_in_primitive) {
        typename Primitive::desc d(dnnl::prop_kind::forward_inference, alg, src, wei, b.desc(*bias), out, win.strides,
                                   win.dnnl_dilations(), win.pad_begin, win.pad_end);
        return PD(d, attr, b.engine());
      }
      typename Primitive::desc d(dnnl::prop_kind::forward_inference, alg, src, wei, out, win.strides,
                                 win.dnnl_dilations(), win.pad_begin, win.pad_end);
      return PD(d, attr, b.engine());
    });
  };
  // oneDNN picks the destination layout; a residual that can be accumulated
  // in place but sits in another blocked layout is asked for as dst rather
  // than converted. Plain residuals are left alone (a plain dst slows the
  // convolution more than one reorder costs).
  auto choose = [&](dnnl::algorithm alg, size_t& used) {
    PD pd = make_pd(any_desc(s.dst_dims), used, alg);
    if (auto want = in_place_sum_desc(b, ops, used);
        want && *want != pd.dst_desc() && *want != plain_desc(s.dst_dims) && want->dims() == s.dst_dims) {
      try {
        size_t used_in_place = 0;
        PD in_place = make_pd(*want, used_in_place, alg);
        if (used_in_place == used) pd = in_place;
      } catch (const dnnl::error&) {
        // Keep the oneDNN-chosen layout and copy the residual.
      }
    }
    return pd;
  };
  size_t used = 0;
  PD pd = choose(direct, used);
  bool winograd_chosen = false;
  if (!transposed && winograd_applies(b, s, w)) {
    // Only with all the post-ops direct fuses: a Winograd primitive that
    // leaves some to separate steps is not worth it.
    try {
      size_t used_winograd = 0;
      PD winograd = choose(dnnl::algorithm::convolution_winograd, used_winograd);
      if (used_winograd == used) {
        pd = winograd;
        winograd_chosen = true;
      }
    } catch (const dnnl::error&) {
      // oneDNN has no Winograd kernel for this shape or CPU: stay direct.
    }
  }
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC, b.require(x, pd.src_desc())},
                                               {DNNL_ARG_WEIGHTS, b.require(wv, pd.weights_desc())}};
  if (bias && bias_in_primitive) args.emplace_back(DNNL_ARG_BIAS, b.require(*bias, pd.bias_desc()));
  const ValueId dst = sum_destination(b, ops, used, pd.dst_desc(), s.dst_dims, result_name(n, chain, ops, used));
  args.emplace_back(DNNL_ARG_DST, dst);
  bind_post_ops(b, ops, used, dst, args, n.label());
  std::optional<ProgramBuilder::BandConv> band;
  if constexpr (std::is_same_v<Primitive, dnnl::convolution_forward>)
    band = band_conv(b, args, s, pd, ops, used, n.label());
  b.add_step(Primitive(pd), std::move(args), pd.scratchpad_desc(), n.label());
  if (winograd_chosen) b.name_last_step("convolution winograd");
  if (band) b.set_last_band_conv(std::move(*band));
  if (bias && !bias_in_primitive && s.out_channels == 1 && b.is_constant(*bias)) {
    // One channel: the bias is a scalar, added by a linear eltwise. (A
    // binary add would need it in dst's padded blocked layout, which oneDNN
    // 2.6 misreads for a scalar, or plain, which only its reference kernel
    // takes: 23 ms on a 640x640 map.)
    const float shift = b.constant_data(*bias)[0];
    dnnl::eltwise_forward::desc add(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_linear,
                                    pd.dst_desc(), 1.f, shift);
    dnnl::eltwise_forward::primitive_desc add_pd(add, b.attr(), b.engine());
    b.add_step(dnnl::eltwise_forward(add_pd), {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}}, add_pd.scratchpad_desc(),
               n.label() + " (bias)");
  } else if (bias && !bias_in_primitive) {
    const std::vector<int64_t> per_channel = {1, s.out_channels, 1, 1};
    // Per-channel bias laid out like dst (plain for a non-constant scalar).
    const ValueId bias_view = b.view(*bias, per_channel);
    const ValueId bias_nchw =
        s.out_channels == 1 ? bias_view : b.require(bias_view, desc_like(pd.dst_desc(), per_channel));
    dnnl::binary::desc add(dnnl::algorithm::binary_add, pd.dst_desc(), b.desc(bias_nchw), pd.dst_desc());
    dnnl::binary::primitive_desc add_pd(add, b.attr(), b.engine());
    b.add_step(dnnl::binary(add_pd), {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, bias_nchw}, {DNNL_ARG_DST, dst}},
               add_pd.scratchpad_desc(), n.label() + " (bias)");
  }
  return finish_chain(b, n, chain, ops, used, dst);
}

}  // namespace

// Loom's host kernels tried before oneDNN's convolution, in order: each
// builds the node (and returns how many chain nodes it absorbed) where its
// contract holds, else builds nothing and returns nullopt.
using HostConvolution = std::optional<size_t> (*)(ProgramBuilder&, const NodeSpec&, const Chain&);
constexpr HostConvolution kHostConvolutions[] = {build_depthwise_3x3, build_narrow_pointwise};

size_t build_conv(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  for (HostConvolution host : kHostConvolutions)
    if (const std::optional<size_t> absorbed = host(b, n, chain)) return *absorbed;
  return build<dnnl::convolution_forward>(b, n, chain, false);
}

size_t build_conv_transpose(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  return build<dnnl::deconvolution_forward>(b, n, chain, true);
}

}  // namespace loom::onednn
