// The loom.nhwc Conv and FusedConv (transform/passes/channels_last.h): X
// [N, H, W, C], W [M, kH, kW, C/group] (OHWI), B [M], Z and Y
// [N, oH, oW, M]. A direct loop, one output at a time, accumulating in the
// compute type (float for float16) over the taps inside the input: the
// oracle the channels-last kernels of other providers are checked against.
#include <string>
#include <vector>

#include "common/dispatch.h"
#include "common/nn_window.h"
#include "kernel_families.h"
#include "kernels/contrib_internal.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

// Output rows between checks whether the run must stop.
constexpr int64_t kRowsPerStopCheck = 16;

class NhwcConv {
 public:
  NhwcConv(const sdk::Node& n, bool fused)
      : attrs_(sdk::window_attrs_of(n, "loom.nhwc Conv")), group_(n.attr_int("group", 1)), fused_(fused) {}

  void compute(KernelContext& ctx) const {
    const std::string op = fused_ ? "loom.nhwc FusedConv" : "loom.nhwc Conv";
    const ConstTensor x = ctx.required_input(0), w = ctx.required_input(1), b = ctx.input(2);
    const Shape xs = x.shape(), ws = w.shape();
    if (xs.size() != 4 || ws.size() != 4)
      sdk::fail_invalid(op + ": X " + shape_string(xs) + " and W " + shape_string(ws) + " must be 4-D");
    if (x.dtype() != w.dtype()) sdk::fail_invalid(op + ": X and W element types differ");
    if (group_ <= 0) sdk::fail_invalid(op + ": group must be positive");
    const int64_t n = xs[0], h = xs[1], wd = xs[2], c = xs[3], m = ws[0], cg = ws[3];
    if (c != sdk::checked_mul(cg, group_, op + " channels"))
      sdk::fail_invalid(op + ": X has " + std::to_string(c) + " channels but W " + shape_string(ws) + " with group " +
                        std::to_string(group_) + " expects " + std::to_string(cg * group_));
    if (m % group_ != 0) sdk::fail_invalid(op + ": output channels " + std::to_string(m) + " not divisible by group");
    if (b.exists() && b.size() != m)
      sdk::fail_invalid(op + ": B has " + std::to_string(b.size()) + " elements, expected " + std::to_string(m));
    const WindowGeometry g = sdk::resolve_window(attrs_, {h, wd}, {ws[1], ws[2]}, op);
    const Shape ys = {n, g.out[0], g.out[1], m};
    const int64_t mg = m / group_;
    dispatch<TypeList<float, double, Float16>>(x.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      using A = compute_t<T>;
      sdk::Tensor yt = ctx.output(0, ys, x.dtype());
      if (yt.size() == 0) return;
      const T* px = x.template data<T>();
      const T* pw = w.template data<T>();
      const T* pb = b.exists() ? b.template data<T>() : nullptr;
      T* py = yt.template mutable_data<T>();
      int64_t rows = 0;
      for (int64_t img = 0; img < n; ++img)
        for (int64_t oy = 0; oy < g.out[0]; ++oy) {
          if (++rows % kRowsPerStopCheck == 0) ctx.stop_if_asked();
          for (int64_t ox = 0; ox < g.out[1]; ++ox)
            for (int64_t oc = 0; oc < m; ++oc) {
              const int64_t first_c = (oc / mg) * cg;
              A acc = pb ? static_cast<A>(pb[oc]) : A(0);
              for (int64_t ky = 0; ky < g.kernel[0]; ++ky) {
                const int64_t iy = oy * g.strides[0] - g.pad_begin[0] + ky * g.dilations[0];
                if (iy < 0 || iy >= h) continue;
                for (int64_t kx = 0; kx < g.kernel[1]; ++kx) {
                  const int64_t ix = ox * g.strides[1] - g.pad_begin[1] + kx * g.dilations[1];
                  if (ix < 0 || ix >= wd) continue;
                  const T* xr = px + ((img * h + iy) * wd + ix) * c + first_c;
                  const T* wr = pw + ((oc * g.kernel[0] + ky) * g.kernel[1] + kx) * cg;
                  for (int64_t k = 0; k < cg; ++k) acc += static_cast<A>(xr[k]) * static_cast<A>(wr[k]);
                }
              }
              py[((img * g.out[0] + oy) * g.out[1] + ox) * m + oc] = static_cast<T>(acc);
            }
        }
      if (fused_) fused_conv_epilogue(ctx.node(), yt, ctx.input(3));
    });
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
  bool fused_;
};

struct NhwcPlainConv : NhwcConv {
  explicit NhwcPlainConv(const sdk::Node& n) : NhwcConv(n, false) {}
};
struct NhwcFusedConv : NhwcConv {
  explicit NhwcFusedConv(const sdk::Node& n) : NhwcConv(n, true) {}
};

}  // namespace

void register_nhwc_kernels(sdk::KernelRegistry& r) {
  const std::vector<sdk::TypeConstraintSpec> types = {{"T", {LOOM_DTYPE_FLOAT16, LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE}}};
  r.add_class<NhwcPlainConv>(kNhwcDomain, "Conv", 1, LOOM_OPSET_OPEN_END, types);
  r.add_class<NhwcFusedConv>(kNhwcDomain, "FusedConv", 1, LOOM_OPSET_OPEN_END, types);
  register_nhwc_pool_kernels(r);
}

}  // namespace loom::reference
