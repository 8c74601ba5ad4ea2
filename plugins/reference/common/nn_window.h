// Sliding-window loops shared by the nn family's Conv and pooling kernels:
// N-d im2col / col2im over a geometry that loom/sdk/window.h resolves
// (attribute parsing, output sizes and pads).
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "common/shape.h"
#include "loom/sdk/window.h"

namespace loom::reference {

using sdk::AutoPad;
using sdk::WindowAttrs;

// A resolved forward window (loom/sdk/window.h) with the sizes the loops
// need. ConvTranspose fills one from the adjoint convolution's view: `in`
// is its output Y, `out` its input X.
struct WindowGeometry : sdk::Window {
  WindowGeometry() = default;
  WindowGeometry(sdk::Window w) : sdk::Window(std::move(w)) {}  // NOLINT(google-explicit-constructor)
  int64_t kernel_size() const { return element_count(kernel); }
  int64_t out_size() const { return element_count(out); }
  int64_t in_size() const { return element_count(in); }
};

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
