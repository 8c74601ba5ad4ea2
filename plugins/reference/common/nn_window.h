// Sliding-window geometry shared by the nn family's Conv and pooling kernels:
// attribute parsing (kernel_shape, strides, dilations, pads, auto_pad,
// ceil_mode), output-size / padding resolution, and N-d im2col / col2im.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/shape.h"

namespace loom::reference {

enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

inline AutoPad parse_auto_pad(const std::string& s, std::string_view op) {
  if (s.empty() || s == "NOTSET") return AutoPad::kNotSet;
  if (s == "VALID") return AutoPad::kValid;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  sdk::fail_invalid(std::string(op) + ": unknown auto_pad '" + s + "'");
}

// Window attributes as written on the node (empty vectors when absent).
struct WindowAttrs {
  Shape kernel, strides, dilations, pads;
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;

  WindowAttrs() = default;
  WindowAttrs(const sdk::Node& n, std::string_view op)
      : kernel(n.attr_ints("kernel_shape")),
        strides(n.attr_ints("strides")),
        dilations(n.attr_ints("dilations")),
        pads(n.attr_ints("pads")),
        auto_pad(parse_auto_pad(n.attr_string("auto_pad", "NOTSET"), op)),
        ceil_mode(n.attr_int("ceil_mode", 0) != 0) {}
};

// Fully resolved geometry for one input: every vector has one entry per
// spatial dim.
struct WindowGeometry {
  Shape in, kernel, strides, dilations, pad_begin, pad_end, out;
  size_t rank() const { return in.size(); }
  int64_t kernel_size() const { return element_count(kernel); }
  int64_t out_size() const { return element_count(out); }
  int64_t in_size() const { return element_count(in); }
};

// Resolves output sizes and pads for a forward window op (Conv, pooling).
// `kernel` overrides attrs.kernel when non-empty (Conv reads it from W).
inline WindowGeometry resolve_window(const WindowAttrs& a, const Shape& in_spatial, const Shape& kernel,
                                     std::string_view op) {
  const size_t r = in_spatial.size();
  const std::string o(op);
  WindowGeometry g;
  g.in = in_spatial;
  g.kernel = kernel.empty() ? a.kernel : kernel;
  if (g.kernel.size() != r)
    sdk::fail_invalid(o + ": kernel_shape has " + std::to_string(g.kernel.size()) + " dims, input has " +
                      std::to_string(r) + " spatial dims");
  g.strides = a.strides.empty() ? Shape(r, 1) : a.strides;
  g.dilations = a.dilations.empty() ? Shape(r, 1) : a.dilations;
  if (g.strides.size() != r) sdk::fail_invalid(o + ": strides must have one value per spatial dim");
  if (g.dilations.size() != r) sdk::fail_invalid(o + ": dilations must have one value per spatial dim");
  Shape pads = a.pads.empty() ? Shape(2 * r, 0) : a.pads;
  if (pads.size() != 2 * r) sdk::fail_invalid(o + ": pads must have two values per spatial dim");
  g.pad_begin.assign(pads.begin(), pads.begin() + r);
  g.pad_end.assign(pads.begin() + r, pads.end());
  g.out.assign(r, 0);
  for (size_t d = 0; d < r; ++d) {
    const int64_t k = g.kernel[d], s = g.strides[d], dil = g.dilations[d], in = g.in[d];
    if (k <= 0 || s <= 0 || dil <= 0)
      sdk::fail_invalid(o + ": kernel, strides and dilations must be positive");
    if (g.pad_begin[d] < 0 || g.pad_end[d] < 0) sdk::fail_invalid(o + ": pads must be non-negative");
    // Sizes from attributes are checked: a hostile kernel, dilation or pad
    // must not wrap around int64.
    const std::string what = o + " window of spatial dim " + std::to_string(d);
    const int64_t eff = sdk::checked_add(sdk::checked_mul(k - 1, dil, what), 1, what);
    switch (a.auto_pad) {
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        const int64_t out = sdk::checked_add(in, s - 1, what) / s;
        const int64_t total =
            std::max<int64_t>(0, sdk::checked_sub(sdk::checked_add((out - 1) * s, eff, what), in, what));
        const int64_t small = total / 2, large = total - small;
        g.pad_begin[d] = a.auto_pad == AutoPad::kSameUpper ? small : large;
        g.pad_end[d] = a.auto_pad == AutoPad::kSameUpper ? large : small;
        g.out[d] = out;
        break;
      }
      case AutoPad::kValid:
      case AutoPad::kNotSet: {
        if (a.auto_pad == AutoPad::kValid) g.pad_begin[d] = g.pad_end[d] = 0;
        const int64_t padded = sdk::checked_add(sdk::checked_add(in, g.pad_begin[d], what), g.pad_end[d], what);
        const int64_t span = padded - eff;
        if (span < 0)
          sdk::fail_invalid(o + ": spatial dim " + std::to_string(d) + " of size " + std::to_string(in) +
                            " (padded " + std::to_string(padded) +
                            ") is smaller than the kernel extent " + std::to_string(eff));
        int64_t out = (a.ceil_mode ? sdk::checked_add(span, s - 1, what) / s : span / s) + 1;
        // With ceil_mode the last window must start inside the input or the
        // leading padding (PyTorch's rule), never in the trailing padding.
        if (a.ceil_mode && (out - 1) * s >= in + g.pad_begin[d]) --out;
        g.out[d] = out;
        break;
      }
    }
  }
  return g;
}

// Odometer over the spatial positions of `out` excluding the innermost dim:
// calls f(outer_index_vector) for each.
template <class F>
void for_each_outer(const Shape& out, F&& f) {
  const size_t r = out.size();
  if (r == 0) return;
  for (size_t d = 0; d + 1 < r; ++d)
    if (out[d] == 0) return;
  Shape idx(r, 0);
  while (true) {
    f(idx);
    size_t d = r - 1;  // the innermost dim is the caller's loop
    while (true) {
      if (d == 0) return;
      --d;
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
}

// Lowers one image x[C, in...] to col[C * kernel_size, out_size]; positions
// in the padding read `pad`.
template <class T>
void im2col(const T* x, int64_t channels, const WindowGeometry& g, T pad, T* col) {
  const size_t r = g.rank();
  const int64_t ks = g.kernel_size(), os = g.out_size(), is = g.in_size();
  const Shape in_st = strides_of(g.in);
  const int64_t ow = g.out[r - 1], iw = g.in[r - 1];
  const int64_t sw = g.strides[r - 1], dw = g.dilations[r - 1], pw = g.pad_begin[r - 1];
  Shape kidx(r, 0);
  for (int64_t kk = 0; kk < ks; ++kk) {
    // kidx = multi-index of kk in the kernel.
    for (int64_t rem = kk, d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      kidx[d] = rem % g.kernel[d];
      rem /= g.kernel[d];
    }
    const int64_t kw_off = kidx[r - 1] * dw - pw;
    for (int64_t c = 0; c < channels; ++c) {
      T* row = col + (c * ks + kk) * os;
      const T* xc = x + c * is;
      int64_t pos = 0;
      for_each_outer(g.out, [&](const Shape& oidx) {
        bool inside = true;
        int64_t base = 0;
        for (size_t d = 0; d + 1 < r; ++d) {
          const int64_t i = oidx[d] * g.strides[d] - g.pad_begin[d] + kidx[d] * g.dilations[d];
          if (i < 0 || i >= g.in[d]) {
            inside = false;
            break;
          }
          base += i * in_st[d];
        }
        T* dst = row + pos;
        pos += ow;
        if (!inside) {
          std::fill(dst, dst + ow, pad);
          return;
        }
        const T* src = xc + base;
        for (int64_t o = 0; o < ow; ++o) {
          const int64_t i = o * sw + kw_off;
          dst[o] = (i >= 0 && i < iw) ? src[i] : pad;
        }
      });
    }
  }
}

// Adjoint of im2col: adds col[C * kernel_size, out_size] into y[C, in...]
// (for ConvTranspose, `in` is the transposed conv's output and `out` its
// input). y must be initialised by the caller.
template <class T>
void col2im_add(const T* col, int64_t channels, const WindowGeometry& g, T* y) {
  const size_t r = g.rank();
  const int64_t ks = g.kernel_size(), os = g.out_size(), is = g.in_size();
  const Shape in_st = strides_of(g.in);
  const int64_t ow = g.out[r - 1], iw = g.in[r - 1];
  const int64_t sw = g.strides[r - 1], dw = g.dilations[r - 1], pw = g.pad_begin[r - 1];
  Shape kidx(r, 0);
  for (int64_t kk = 0; kk < ks; ++kk) {
    for (int64_t rem = kk, d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      kidx[d] = rem % g.kernel[d];
      rem /= g.kernel[d];
    }
    const int64_t kw_off = kidx[r - 1] * dw - pw;
    for (int64_t c = 0; c < channels; ++c) {
      const T* row = col + (c * ks + kk) * os;
      T* yc = y + c * is;
      int64_t pos = 0;
      for_each_outer(g.out, [&](const Shape& oidx) {
        bool inside = true;
        int64_t base = 0;
        for (size_t d = 0; d + 1 < r; ++d) {
          const int64_t i = oidx[d] * g.strides[d] - g.pad_begin[d] + kidx[d] * g.dilations[d];
          if (i < 0 || i >= g.in[d]) {
            inside = false;
            break;
          }
          base += i * in_st[d];
        }
        const T* src = row + pos;
        pos += ow;
        if (!inside) return;
        T* dst = yc + base;
        for (int64_t o = 0; o < ow; ++o) {
          const int64_t i = o * sw + kw_off;
          if (i >= 0 && i < iw) dst[i] += src[o];
        }
      });
    }
  }
}

}  // namespace loom::reference
