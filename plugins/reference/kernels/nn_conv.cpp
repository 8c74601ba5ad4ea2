// Convolutions: Conv, ConvTranspose, ConvInteger, QLinearConv. Forward
// convolutions lower each image and group with im2col and multiply with the
// shared GEMM; ConvTranspose multiplies first and scatters with col2im.
#include <cmath>
#include <vector>

#include "common/dispatch.h"
#include "common/nn_quant.h"
#include "common/nn_window.h"
#include "kernel_families.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

// Shapes of a forward convolution X[N, C, in...] * W[M, C/group, k...].
struct ConvProblem {
  int64_t n = 0, c = 0, m = 0, group = 1;
  WindowGeometry g;
  Shape out_shape;  // [N, M, out...]
};

ConvProblem conv_problem(const Shape& xs, const Shape& ws, int64_t group, const WindowAttrs& attrs,
                         const std::string& op) {
  if (xs.size() < 3) sdk::fail_invalid(op + ": input X must have rank >= 3, got " + shape_string(xs));
  if (ws.size() != xs.size())
    sdk::fail_invalid(op + ": W " + shape_string(ws) + " and X " + shape_string(xs) + " ranks differ");
  if (group <= 0) sdk::fail_invalid(op + ": group must be positive");
  ConvProblem p;
  p.n = xs[0];
  p.c = xs[1];
  p.m = ws[0];
  p.group = group;
  if (p.c != ws[1] * group)
    sdk::fail_invalid(op + ": X has " + std::to_string(p.c) + " channels but W " + shape_string(ws) +
                      " with group " + std::to_string(group) + " expects " + std::to_string(ws[1] * group));
  if (p.m % group != 0)
    sdk::fail_invalid(op + ": output channels " + std::to_string(p.m) + " not divisible by group");
  p.g = sdk::resolve_window(attrs, Shape(xs.begin() + 2, xs.end()), Shape(ws.begin() + 2, ws.end()), op);
  p.out_shape = {p.n, p.m};
  p.out_shape.insert(p.out_shape.end(), p.g.out.begin(), p.g.out.end());
  return p;
}

bool is_pointwise(const WindowGeometry& g) {
  for (size_t d = 0; d < g.rank(); ++d)
    if (g.kernel[d] != 1 || g.strides[d] != 1 || g.pad_begin[d] != 0 || g.pad_end[d] != 0) return false;
  return true;
}

// y[N, M, out...] = conv(x, w) without bias, in accumulator type A. Padding
// reads zero (integer callers subtract zero points beforehand). The im2col
// buffer (C/group x kernel x output positions, which a hostile kernel size
// makes far larger than X or Y) is the run's scratch, so limits see it first.
template <class A>
void conv_forward(KernelContext& ctx, const ConvProblem& p, const A* x, const A* w, A* y) {
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  const int64_t ks = p.g.kernel_size(), os = p.g.out_size(), is = p.g.in_size();
  const int64_t rows = sdk::checked_mul(cg, ks, "Conv im2col rows");
  if (os == 0 || p.m == 0 || p.n == 0) return;
  const bool pointwise = is_pointwise(p.g);
  A* col = pointwise ? nullptr : ctx.scratch<A>(sdk::checked_mul(rows, os, "Conv im2col"), "Conv im2col buffer");
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      const A* xg = x + (n * p.c + gi * cg) * is;
      const A* b = xg;
      if (!pointwise) {
        im2col(xg, cg, p.g, A(0), col);
        b = col;
      }
      A* yg = y + (n * p.m + gi * mg) * os;
      if (rows == 0) {
        std::fill(yg, yg + mg * os, A(0));
        continue;
      }
      nn_gemm<A>(false, false, mg, os, rows, A(1), w + gi * mg * rows, rows, b, os, A(0), yg, os, &ctx);
    }
  }
}

class Conv {
 public:
  explicit Conv(const sdk::Node& n) : attrs_(sdk::window_attrs_of(n, "Conv")), group_(n.attr_int("group", 1)) {}

  void compute(KernelContext& ctx) const { run(ctx); }

  // Computes Y into output 0 and returns it (FusedConv applies its epilogue to it).
  sdk::Tensor run(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0), w = ctx.required_input(1), b = ctx.input(2);
    if (x.dtype() != w.dtype()) sdk::fail_invalid("Conv: X and W element types differ");
    const ConvProblem p = conv_problem(x.shape(), w.shape(), group_, attrs_, "Conv");
    if (b.exists() && b.size() != p.m)
      sdk::fail_invalid("Conv: B has " + std::to_string(b.size()) + " elements, expected " + std::to_string(p.m));
    sdk::Tensor yt;
    dispatch<TypeList<float, double, Float16, BFloat16>>(x.dtype(), "Conv", [&](auto tag) {
      using T = decltype(tag);
      using A = compute_t<T>;
      yt = ctx.output(0, p.out_shape, x.dtype());
      const int64_t ny = element_count(p.out_shape);
      if (ny == 0) return;
      T* y = yt.template mutable_data<T>();
      const int64_t os = p.g.out_size();
      auto add_bias = [&](A* ya) {
        if (!b.exists()) return;
        const T* pb = b.template data<T>();
        for (int64_t n = 0; n < p.n; ++n)
          for (int64_t m = 0; m < p.m; ++m) {
            const A bv = static_cast<A>(pb[m]);
            A* row = ya + (n * p.m + m) * os;
            for (int64_t i = 0; i < os; ++i) row[i] += bv;
          }
      };
      if constexpr (std::is_same_v<T, A>) {
        conv_forward<A>(ctx, p, x.template data<T>(), w.template data<T>(), y);
        add_bias(y);
      } else {
        const std::vector<A> xa = nn_to_vector<A>(x.template data<T>(), x.size());
        const std::vector<A> wa = nn_to_vector<A>(w.template data<T>(), w.size());
        std::vector<A> ya(static_cast<size_t>(ny));
        conv_forward<A>(ctx, p, xa.data(), wa.data(), ya.data());
        add_bias(ya.data());
        for (int64_t i = 0; i < ny; ++i) y[i] = static_cast<T>(ya[i]);
      }
    });
    return yt;
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

// Integer convolution core shared by ConvInteger and QLinearConv: writes the
// int32 accumulators of (x - x_zero) * (w - w_zero[m]) to `acc` (Y's shape;
// callers allocate Y first, so an oversized Y is refused before any work).
void integer_conv(KernelContext& ctx, const ConvProblem& p, const ConstTensor& x, int32_t x_zero,
                  const ConstTensor& w, const QuantParams& wq, const std::string& op, int32_t* acc) {
  std::vector<int32_t> xi(static_cast<size_t>(x.size())), wi(static_cast<size_t>(w.size()));
  dispatch<TypeList<uint8_t, int8_t>>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.template data<T>();
    for (size_t i = 0; i < xi.size(); ++i) xi[i] = static_cast<int32_t>(px[i]) - x_zero;
  });
  const int64_t per_m = p.m == 0 ? 0 : w.size() / p.m;
  dispatch<TypeList<uint8_t, int8_t>>(w.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* pw = w.template data<T>();
    for (size_t i = 0; i < wi.size(); ++i)
      wi[i] = static_cast<int32_t>(pw[i]) - wq.zero_at(static_cast<int64_t>(i) / per_m);
  });
  conv_forward<int32_t>(ctx, p, xi.data(), wi.data(), acc);
}

class ConvInteger {
 public:
  explicit ConvInteger(const sdk::Node& n)
      : attrs_(sdk::window_attrs_of(n, "ConvInteger")), group_(n.attr_int("group", 1)) {}

  void compute(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0), w = ctx.required_input(1);
    const ConvProblem p = conv_problem(x.shape(), w.shape(), group_, attrs_, "ConvInteger");
    const QuantParams xq = read_quant_params(ConstTensor(), ctx.input(2), 1, "ConvInteger x_zero_point");
    const QuantParams wq = read_quant_params(ConstTensor(), ctx.input(3), p.m, "ConvInteger w_zero_point");
    sdk::Tensor y = ctx.output(0, p.out_shape, LOOM_DTYPE_INT32);
    if (y.size() > 0) integer_conv(ctx, p, x, xq.zero_at(0), w, wq, "ConvInteger", y.mutable_data<int32_t>());
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

class QLinearConv {
 public:
  explicit QLinearConv(const sdk::Node& n)
      : attrs_(sdk::window_attrs_of(n, "QLinearConv")), group_(n.attr_int("group", 1)) {}

  void compute(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0), w = ctx.required_input(3), b = ctx.input(8);
    const ConstTensor y_zero = ctx.required_input(7);
    const ConvProblem p = conv_problem(x.shape(), w.shape(), group_, attrs_, "QLinearConv");
    const QuantParams xq = read_quant_params(ctx.required_input(1), ctx.required_input(2), 1, "QLinearConv x");
    const QuantParams wq = read_quant_params(ctx.required_input(4), ctx.required_input(5), p.m, "QLinearConv w");
    const QuantParams yq = read_quant_params(ctx.required_input(6), y_zero, 1, "QLinearConv y");
    if (b.exists() && (b.dtype() != LOOM_DTYPE_INT32 || b.size() != p.m))
      sdk::fail_invalid("QLinearConv: B must be int32 with " + std::to_string(p.m) + " elements");
    const int64_t os = p.g.out_size();
    dispatch<TypeList<uint8_t, int8_t>>(y_zero.dtype(), "QLinearConv", [&](auto tag) {
      using Q = decltype(tag);
      sdk::Tensor yt = ctx.output(0, p.out_shape, y_zero.dtype());
      if (yt.size() == 0) return;
      int32_t* acc = ctx.scratch<int32_t>(yt.size(), "QLinearConv accumulators");
      integer_conv(ctx, p, x, xq.zero_at(0), w, wq, "QLinearConv", acc);
      Q* y = yt.template mutable_data<Q>();
      const int32_t* pb = b.exists() ? b.data<int32_t>() : nullptr;
      for (int64_t n = 0; n < p.n; ++n)
        for (int64_t m = 0; m < p.m; ++m) {
          const float scale = xq.scale_at(0) * wq.scale_at(m) / yq.scale_at(0);
          const int32_t bias = pb ? pb[m] : 0;
          const int64_t base = (n * p.m + m) * os;
          for (int64_t i = 0; i < os; ++i)
            y[base + i] = quantize_round<Q>(static_cast<float>(acc[base + i] + bias) * scale, yq.zero_at(0));
        }
    });
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

class ConvTranspose {
 public:
  explicit ConvTranspose(const sdk::Node& n)
      : attrs_(sdk::transpose_attrs_of(n, "ConvTranspose")), group_(n.attr_int("group", 1)) {}

  void compute(KernelContext& ctx) const {
    const std::string op = "ConvTranspose";
    const ConstTensor x = ctx.required_input(0), w = ctx.required_input(1), b = ctx.input(2);
    if (x.dtype() != w.dtype()) sdk::fail_invalid(op + ": X and W element types differ");
    const Shape xs = x.shape(), ws = w.shape();
    if (xs.size() < 3 || ws.size() != xs.size())
      sdk::fail_invalid(op + ": X " + shape_string(xs) + " and W " + shape_string(ws) + " must have equal rank >= 3");
    const int64_t n_batch = xs[0], c = xs[1], group = group_;
    if (group <= 0 || c != ws[0] || c % group != 0)
      sdk::fail_invalid(op + ": X channels " + std::to_string(c) + " must equal W dim 0 " + std::to_string(ws[0]) +
                        " and be divisible by group " + std::to_string(group));
    const int64_t mg = ws[1], m = mg * group, cg = c / group;
    if (b.exists() && b.size() != m)
      sdk::fail_invalid(op + ": B has " + std::to_string(b.size()) + " elements, expected " + std::to_string(m));

    const sdk::TransposeWindow t =
        sdk::resolve_conv_transpose(attrs_, Shape(xs.begin() + 2, xs.end()), Shape(ws.begin() + 2, ws.end()), op);
    // Geometry seen from the adjoint forward conv: `in` is Y's spatial shape
    // and `out` is X's.
    WindowGeometry g;
    g.in = t.out;
    g.out = t.in;
    g.kernel = t.kernel;
    g.strides = t.strides;
    g.dilations = t.dilations;
    g.pad_begin = t.pad_begin;
    g.pad_end = t.pad_end;
    Shape out_shape = {n_batch, m};
    out_shape.insert(out_shape.end(), g.in.begin(), g.in.end());

    dispatch<TypeList<float, double, Float16, BFloat16>>(x.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      using A = compute_t<T>;
      sdk::Tensor yt = ctx.output(0, out_shape, x.dtype());
      const int64_t ny = element_count(out_shape);
      if (ny == 0) return;
      std::vector<A> xa, wa;
      const A* px;
      const A* pw;
      if constexpr (std::is_same_v<T, A>) {
        px = x.template data<T>();
        pw = w.template data<T>();
      } else {
        xa = nn_to_vector<A>(x.template data<T>(), x.size());
        wa = nn_to_vector<A>(w.template data<T>(), w.size());
        px = xa.data();
        pw = wa.data();
      }
      std::vector<A> ya(static_cast<size_t>(ny), A(0));
      const int64_t ks = g.kernel_size(), xsz = g.out_size(), ysz = g.in_size();
      // M/group x kernel x input positions: larger than X and Y for a
      // hostile kernel size, so it is the run's scratch.
      const int64_t col_count = sdk::checked_mul(sdk::checked_mul(mg, ks, op), xsz, op + " col2im buffer");
      A* col = ctx.scratch<A>(col_count, op + " col2im buffer");
      for (int64_t n = 0; n < n_batch; ++n)
        for (int64_t gi = 0; gi < group; ++gi) {
          // col[mg*ks, xsz] = W_g^T[mg*ks, cg] * X_g[cg, xsz]
          if (xsz == 0) continue;
          if (cg == 0) std::fill(col, col + col_count, A(0));
          else
            nn_gemm<A>(true, false, mg * ks, xsz, cg, A(1), pw + gi * cg * mg * ks, mg * ks,
                       px + (n * c + gi * cg) * xsz, xsz, A(0), col, xsz, &ctx);
          col2im_add(col, mg, g, ya.data() + (n * m + gi * mg) * ysz);
        }
      if (b.exists()) {
        const T* pb = b.template data<T>();
        for (int64_t n = 0; n < n_batch; ++n)
          for (int64_t mi = 0; mi < m; ++mi) {
            const A bv = static_cast<A>(pb[mi]);
            A* row = ya.data() + (n * m + mi) * ysz;
            for (int64_t i = 0; i < ysz; ++i) row[i] += bv;
          }
      }
      T* y = yt.template mutable_data<T>();
      for (int64_t i = 0; i < ny; ++i) y[i] = static_cast<T>(ya[i]);
    });
  }

 private:
  sdk::TransposeAttrs attrs_;
  int64_t group_;
};

}  // namespace

sdk::Tensor conv_into_output(KernelContext& ctx, const sdk::Node& node) { return Conv(node).run(ctx); }

void register_nn_conv_kernels(sdk::KernelRegistry& r) {
  r.add_class<Conv>("", "Conv", 1, LOOM_OPSET_OPEN_END);
  r.add_class<ConvTranspose>("", "ConvTranspose", 1, LOOM_OPSET_OPEN_END);
  r.add_class<ConvInteger>("", "ConvInteger", 10, LOOM_OPSET_OPEN_END);
  r.add_class<QLinearConv>("", "QLinearConv", 10, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
