// Pooling: MaxPool (with Indices), AveragePool, LpPool, their Global forms,
// and MaxUnpool. Windows are visited directly (no im2col): per output
// position the valid part of the window is a box in the input. The
// loom.nhwc MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool
// (transform/passes/channels_last.h) are the same loops over channels-last data:
// plane (n, c) starts at n * spatial * C + c and steps by C.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/dispatch.h"
#include "common/nn_window.h"
#include "kernel_families.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

enum class PoolKind { kMax, kAverage, kLp };

// The valid part of one output position's window: per spatial dim the first
// input coordinate, the range of kernel taps [k_lo, k_hi) that land inside
// the input, and the number of taps inside input + pads (count_include_pad).
struct WindowBox {
  Shape start, k_lo, k_hi;
  int64_t valid = 0;  // taps inside the input (at most its size)
  double padded = 0;  // taps inside input + pads: a product of kernel dims, which may pass int64
};

// Taps k in [0, kernel) with k * dilation < limit: ceil(limit / dilation),
// by division (a window of 2^62 taps must not be stepped through).
int64_t taps_below(int64_t limit, int64_t dilation, int64_t kernel) {
  if (limit <= 0) return 0;
  const int64_t taps = limit / dilation + (limit % dilation != 0 ? 1 : 0);
  return std::min(taps, kernel);
}

WindowBox window_box(const WindowGeometry& g, const Shape& oidx) {
  const size_t r = g.rank();
  WindowBox b;
  b.start.resize(r);
  b.k_lo.resize(r);
  b.k_hi.resize(r);
  b.valid = 1;
  b.padded = 1;
  for (size_t d = 0; d < r; ++d) {
    // s >= -pad_begin, and in - s, in + pad_end - s stay within the padded
    // extent the geometry checked, so none of this overflows.
    const int64_t s = oidx[d] * g.strides[d] - g.pad_begin[d], dil = g.dilations[d], k = g.kernel[d];
    const int64_t lo = s >= 0 ? 0 : std::min(k, -s / dil + (-s % dil != 0 ? 1 : 0));  // first tap at >= 0
    const int64_t hi = std::max(lo, taps_below(g.in[d] - s, dil, k));                  // taps before the input's end
    const int64_t pad_hi = taps_below(g.in[d] + g.pad_end[d] - s, dil, k);             // taps before the padding's end
    b.start[d] = s;
    b.k_lo[d] = lo;
    b.k_hi[d] = hi;
    b.valid *= hi - lo;
    b.padded *= static_cast<double>(pad_hi);
  }
  return b;
}

// Calls f(spatial_offset, row_major_coords) for each tap of the box.
template <class F>
void for_each_tap(const WindowGeometry& g, const Shape& in_strides, const WindowBox& b, Shape& coord, F&& f) {
  const size_t r = g.rank();
  if (b.valid == 0) return;
  Shape k(b.k_lo);
  while (true) {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) {
      coord[d] = b.start[d] + k[d] * g.dilations[d];
      off += coord[d] * in_strides[d];
    }
    f(off, coord);
    size_t d = r;
    while (true) {
      if (d == 0) return;
      --d;
      if (++k[d] < b.k_hi[d]) break;
      k[d] = b.k_lo[d];
    }
  }
}

// Where plane `pl` of x (spatial size `is`) starts and how far apart its
// elements are: NCHW planes are contiguous, NHWC ones interleave C.
struct PlaneLayout {
  int64_t channels = 0;  // C when channels-last, else 0
  int64_t base(int64_t pl, int64_t is) const { return channels ? (pl / channels) * is * channels + pl % channels : pl * is; }
  int64_t step() const { return channels ? channels : 1; }
};

// Output positions whose window boxes are computed at once and shared by all
// N*C planes: bounded, so the boxes never outgrow what the output justifies.
constexpr int64_t kBoxesPerBatch = 4096;
// Window taps visited between checks whether the run must stop.
constexpr int64_t kTapsPerStopCheck = int64_t{1} << 24;

// The window boxes of output positions [first, first + count) (row-major).
void boxes_of(const WindowGeometry& g, int64_t first, int64_t count, std::vector<WindowBox>& boxes) {
  const size_t r = g.rank();
  Shape o(r);
  for (size_t d = r, rem = static_cast<size_t>(first); d-- > 0;) {
    o[d] = static_cast<int64_t>(rem % static_cast<size_t>(g.out[d]));
    rem /= static_cast<size_t>(g.out[d]);
  }
  boxes.clear();
  for (int64_t i = 0; i < count; ++i) {
    boxes.push_back(window_box(g, o));
    for (size_t d = r; d-- > 0;) {
      if (++o[d] < g.out[d]) break;
      o[d] = 0;
    }
  }
}

class Pool {
 public:
  Pool(const sdk::Node& n, PoolKind kind, const char* name, bool channels_last = false)
      : kind_(kind), name_(name), attrs_(sdk::window_attrs_of(n, name)), channels_last_(channels_last) {
    count_include_pad_ = n.attr_int("count_include_pad", 0) != 0;
    storage_order_ = n.attr_int("storage_order", 0);
    if (kind == PoolKind::kLp) {
      // LpPool-1 has a float `p`; later versions an int.
      if (n.attr_type("p") == LOOM_ATTR_FLOAT) p_ = n.attr_float("p", 2.0f);
      else p_ = static_cast<float>(n.attr_int("p", 2));
    }
    if (attrs_.kernel.empty()) sdk::fail_invalid(std::string(name) + ": kernel_shape is required");
  }

  void compute(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0);
    const Shape xs = x.shape();
    const std::string op(name_);
    if (xs.size() < 3) sdk::fail_invalid(op + ": input must have rank >= 3, got " + shape_string(xs));
    const int64_t channels = channels_last_ ? xs.back() : xs[1];
    const Shape spatial = channels_last_ ? Shape(xs.begin() + 1, xs.end() - 1) : Shape(xs.begin() + 2, xs.end());
    const WindowGeometry g = sdk::resolve_window(attrs_, spatial, {}, op);
    Shape ys = {xs[0]};
    if (!channels_last_) ys.push_back(channels);
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    if (channels_last_) ys.push_back(channels);
    const PlaneLayout layout{channels_last_ ? channels : 0};
    const bool want_indices = kind_ == PoolKind::kMax && ctx.output_count() > 1 &&
                              !ctx.node().output_name(1).empty();
    if (want_indices && channels_last_) sdk::fail_invalid(op + ": the channels-last form has no Indices output");
    if (want_indices && storage_order_ != 0 && storage_order_ != 1)
      sdk::fail_invalid(op + ": storage_order must be 0 or 1");
    auto run = [&](auto tag) {
      using T = decltype(tag);
      using C = compute_t<T>;
      const T* px = x.template data<T>();
      T* py = ctx.output(0, ys, x.dtype()).template mutable_data<T>();
      int64_t* pi = want_indices ? ctx.output(1, ys, LOOM_DTYPE_INT64).template mutable_data<int64_t>() : nullptr;
      const int64_t planes = xs[0] * channels, is = g.in_size(), os = g.out_size();
      const int64_t in_step = layout.step();
      if (planes * os == 0) return;
      std::vector<WindowBox> boxes;
      int64_t taps_since_check = 0;
      const Shape in_st = strides_of(g.in);
      // Column-major spatial strides for storage_order 1.
      Shape col_st(g.rank(), 1);
      for (size_t d = 1; d < g.rank(); ++d) col_st[d] = col_st[d - 1] * g.in[d - 1];
      Shape coord(g.rank());
      for (int64_t first = 0; first < os; first += kBoxesPerBatch) {
        const int64_t last = std::min(os, first + kBoxesPerBatch);
        boxes_of(g, first, last - first, boxes);
        for (int64_t pl = 0; pl < planes; ++pl) {
          const T* xp = px + layout.base(pl, is);
          T* yp = py + layout.base(pl, os);
          for (int64_t o = first; o < last; ++o) {
            const WindowBox& b = boxes[static_cast<size_t>(o - first)];
            // Huge windows make one call long: stop between windows once
            // the run is cancelled or timed out.
            taps_since_check += b.valid;
            if (taps_since_check > kTapsPerStopCheck) {
              ctx.stop_if_asked();
              taps_since_check = 0;
            }
            if (kind_ == PoolKind::kMax) {
              C best = std::numeric_limits<C>::lowest();
              int64_t best_off = -1;
              for_each_tap(g, in_st, b, coord, [&](int64_t off, const Shape&) {
                const C v = static_cast<C>(xp[off * in_step]);
                if (best_off < 0 || v > best) {
                  best = v;
                  best_off = off;
                }
              });
              yp[o * in_step] = static_cast<T>(best);
              if (pi) {
                int64_t idx = 0;
                if (best_off >= 0 && storage_order_ == 1) {
                  // Recover the coordinates of best_off and re-linearise column-major.
                  for (int64_t d = static_cast<int64_t>(g.rank()) - 1, rem = best_off; d >= 0; --d) {
                    idx += (rem % g.in[d]) * col_st[d];
                    rem /= g.in[d];
                  }
                } else {
                  idx = std::max<int64_t>(best_off, 0);
                }
                pi[pl * os + o] = pl * is + idx;
              }
            } else if (kind_ == PoolKind::kAverage) {
              double sum = 0;
              for_each_tap(g, in_st, b, coord,
                           [&](int64_t off, const Shape&) { sum += static_cast<double>(xp[off * in_step]); });
              const double count = count_include_pad_ ? b.padded : static_cast<double>(b.valid);
              yp[o * in_step] = static_cast<T>(static_cast<C>(count > 0 ? sum / count : 0.0));
            } else {
              double sum = 0;
              for_each_tap(g, in_st, b, coord, [&](int64_t off, const Shape&) {
                sum += std::pow(std::fabs(static_cast<double>(xp[off * in_step])), static_cast<double>(p_));
              });
              yp[o * in_step] = static_cast<T>(static_cast<C>(std::pow(sum, 1.0 / static_cast<double>(p_))));
            }
          }
        }
      }
    };
    if (kind_ == PoolKind::kMax)
      dispatch<TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>>(x.dtype(), op, run);
    else
      dispatch<TypeList<float, double, Float16, BFloat16>>(x.dtype(), op, run);
  }

 private:
  PoolKind kind_;
  const char* name_;
  WindowAttrs attrs_;
  bool channels_last_ = false;
  bool count_include_pad_ = false;
  int64_t storage_order_ = 0;
  float p_ = 2.0f;
};

struct MaxPool : Pool {
  explicit MaxPool(const sdk::Node& n) : Pool(n, PoolKind::kMax, "MaxPool") {}
};
struct AveragePool : Pool {
  explicit AveragePool(const sdk::Node& n) : Pool(n, PoolKind::kAverage, "AveragePool") {}
};
struct NhwcMaxPool : Pool {
  explicit NhwcMaxPool(const sdk::Node& n) : Pool(n, PoolKind::kMax, "loom.nhwc MaxPool", true) {}
};
struct NhwcAveragePool : Pool {
  explicit NhwcAveragePool(const sdk::Node& n) : Pool(n, PoolKind::kAverage, "loom.nhwc AveragePool", true) {}
};
struct LpPool : Pool {
  explicit LpPool(const sdk::Node& n) : Pool(n, PoolKind::kLp, "LpPool") {}
};

// Global pools reduce every spatial position of each (n, c) plane.
template <PoolKind kKind, bool kChannelsLast = false>
void global_pool(KernelContext& ctx) {
  const char* op = kKind == PoolKind::kMax ? "GlobalMaxPool" : kKind == PoolKind::kAverage ? "GlobalAveragePool" : "GlobalLpPool";
  const ConstTensor x = ctx.required_input(0);
  const Shape xs = x.shape();
  if (xs.size() < 2) sdk::fail_invalid(std::string(op) + ": input must have rank >= 2, got " + shape_string(xs));
  // Channels-last: C is the last dim, the spatial dims sit between N and C.
  const size_t c_axis = kChannelsLast ? xs.size() - 1 : 1;
  const size_t first_spatial = kChannelsLast ? 1 : 2, end_spatial = kChannelsLast ? xs.size() - 1 : xs.size();
  const PlaneLayout layout{kChannelsLast ? xs[c_axis] : 0};
  const sdk::Node node = ctx.node();
  const double p = node.attr_type("p") == LOOM_ATTR_FLOAT ? static_cast<double>(node.attr_float("p", 2.0f))
                                                          : static_cast<double>(node.attr_int("p", 2));
  Shape ys(xs.size(), 1);
  ys[0] = xs[0];
  ys[c_axis] = xs[c_axis];
  dispatch<TypeList<float, double, Float16, BFloat16>>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* px = x.template data<T>();
    T* py = ctx.output(0, ys, x.dtype()).template mutable_data<T>();
    const int64_t planes = xs[0] * xs[c_axis], is = dims_product(xs, first_spatial, end_spatial);
    const int64_t step = layout.step();
    for (int64_t pl = 0; pl < planes; ++pl) {
      const T* xp = px + layout.base(pl, is);
      if (kKind == PoolKind::kMax) {
        C best = is > 0 ? static_cast<C>(xp[0]) : std::numeric_limits<C>::lowest();
        for (int64_t i = 1; i < is; ++i)
          if (static_cast<C>(xp[i * step]) > best) best = static_cast<C>(xp[i * step]);
        py[pl] = static_cast<T>(best);
      } else if (kKind == PoolKind::kAverage) {
        double sum = 0;
        for (int64_t i = 0; i < is; ++i) sum += static_cast<double>(xp[i * step]);
        py[pl] = static_cast<T>(static_cast<C>(is > 0 ? sum / static_cast<double>(is) : 0.0));
      } else {
        double sum = 0;
        for (int64_t i = 0; i < is; ++i) sum += std::pow(std::fabs(static_cast<double>(xp[i * step])), p);
        py[pl] = static_cast<T>(static_cast<C>(std::pow(sum, 1.0 / p)));
      }
    }
  });
}

class MaxUnpool {
 public:
  explicit MaxUnpool(const sdk::Node& n) : attrs_(sdk::window_attrs_of(n, "MaxUnpool")) {
    if (attrs_.kernel.empty()) sdk::fail_invalid("MaxUnpool: kernel_shape is required");
  }

  void compute(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0), ind = ctx.required_input(1), oshape = ctx.input(2);
    const Shape xs = x.shape();
    const size_t r = attrs_.kernel.size();
    if (xs.size() != r + 2)
      sdk::fail_invalid("MaxUnpool: input rank " + std::to_string(xs.size()) + " does not match kernel_shape");
    if (ind.shape() != xs) sdk::fail_invalid("MaxUnpool: I must have the shape of X " + shape_string(xs));
    if (ind.dtype() != LOOM_DTYPE_INT64) sdk::fail_invalid("MaxUnpool: I must be int64");
    // Indices address the shape MaxPool's input had (inferred from the
    // attributes); an explicit output_shape may be larger (extra padding), so
    // indices are re-linearised from the inferred shape into it.
    const Shape strides = attrs_.strides.empty() ? Shape(r, 1) : attrs_.strides;
    const Shape pads = attrs_.pads.empty() ? Shape(2 * r, 0) : attrs_.pads;
    if (strides.size() != r || pads.size() != 2 * r) sdk::fail_invalid("MaxUnpool: strides or pads have the wrong length");
    Shape inferred = {xs[0], xs[1]};
    for (size_t d = 0; d < r; ++d) {
      const std::string what = "MaxUnpool: output of spatial dim " + std::to_string(d);
      const int64_t full =
          sdk::checked_add(sdk::checked_mul(xs[d + 2] - 1, strides[d], what), attrs_.kernel[d], what);
      inferred.push_back(sdk::checked_sub(sdk::checked_sub(full, pads[d], what), pads[d + r], what));
    }
    Shape ys = inferred;
    if (oshape.exists()) {
      ys = oshape.to_int64_vector();
      if (ys.size() != xs.size()) sdk::fail_invalid("MaxUnpool: output_shape must have rank " + std::to_string(xs.size()));
      if (ys[0] != xs[0] || ys[1] != xs[1]) sdk::fail_invalid("MaxUnpool: output_shape must keep N and C of X");
    }
    for (int64_t d : inferred)
      if (d < 0) sdk::fail_invalid("MaxUnpool: inferred output shape " + shape_string(inferred) + " is negative");
    // Both shapes' element counts must fit before strides are taken of them.
    sdk::checked_element_count(inferred, "MaxUnpool: inferred output shape " + shape_string(inferred));
    sdk::checked_element_count(ys, "MaxUnpool: output shape " + shape_string(ys));
    const bool relinearise = ys != inferred;
    const Shape out_st = strides_of(ys);
    const int64_t n_inferred = element_count(inferred);
    dispatch<TypeList<float, double, Float16, BFloat16>>(x.dtype(), "MaxUnpool", [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.template data<T>();
      const int64_t* pi = ind.data<int64_t>();
      sdk::Tensor yt = ctx.output(0, ys, x.dtype());
      const int64_t ny = element_count(ys);
      if (ny == 0) return;
      T* py = yt.template mutable_data<T>();
      std::fill(py, py + ny, static_cast<T>(0.0f));
      for (int64_t i = 0, n = x.size(); i < n; ++i) {
        int64_t idx = pi[i];
        if (idx < 0 || idx >= (relinearise ? n_inferred : ny))
          sdk::fail_invalid("MaxUnpool: index " + std::to_string(idx) + " out of range for output " +
                            shape_string(relinearise ? inferred : ys));
        if (relinearise) {
          int64_t out = 0;
          bool inside = true;
          for (int64_t d = static_cast<int64_t>(ys.size()) - 1, rem = idx; d >= 0; --d) {
            const int64_t coord = rem % inferred[d];
            rem /= inferred[d];
            if (coord >= ys[d]) inside = false;
            out += coord * out_st[d];
          }
          if (!inside) continue;  // output_shape smaller than the inferred shape
          idx = out;
        }
        py[idx] = px[i];
      }
    });
  }

 private:
  WindowAttrs attrs_;
};

}  // namespace

void register_nn_pool_kernels(sdk::KernelRegistry& r) {
  r.add_class<MaxPool>("", "MaxPool", 1, LOOM_OPSET_OPEN_END);
  r.add_class<AveragePool>("", "AveragePool", 1, LOOM_OPSET_OPEN_END);
  r.add_class<LpPool>("", "LpPool", 1, LOOM_OPSET_OPEN_END);
  r.add("", "GlobalMaxPool", 1, LOOM_OPSET_OPEN_END, global_pool<PoolKind::kMax>);
  r.add("", "GlobalAveragePool", 1, LOOM_OPSET_OPEN_END, global_pool<PoolKind::kAverage>);
  r.add("", "GlobalLpPool", 1, LOOM_OPSET_OPEN_END, global_pool<PoolKind::kLp>);
  r.add_class<MaxUnpool>("", "MaxUnpool", 9, LOOM_OPSET_OPEN_END);
}

void register_nhwc_pool_kernels(sdk::KernelRegistry& r) {
  r.add_class<NhwcMaxPool>(kNhwcDomain, "MaxPool", 1, LOOM_OPSET_OPEN_END);
  r.add_class<NhwcAveragePool>(kNhwcDomain, "AveragePool", 1, LOOM_OPSET_OPEN_END);
  r.add(kNhwcDomain, "GlobalMaxPool", 1, LOOM_OPSET_OPEN_END, global_pool<PoolKind::kMax, true>);
  r.add(kNhwcDomain, "GlobalAveragePool", 1, LOOM_OPSET_OPEN_END, global_pool<PoolKind::kAverage, true>);
}

}  // namespace loom::reference
