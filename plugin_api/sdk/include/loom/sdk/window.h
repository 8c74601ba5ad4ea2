// Loom plugin SDK (header-only, C++17): sliding-window geometry of Conv,
// ConvTranspose and the pools (MaxPool, AveragePool, LpPool, ...) as the
// ONNX spec defines it: output sizes and explicit pads from kernel_shape,
// strides, dilations, pads, auto_pad, ceil_mode, output_padding and
// output_shape. Every vector holds one entry per spatial dim (pads: all
// begins, then all ends). Sizes come from the model, so all arithmetic is
// checked; every error is an Error with LOOM_STATUS_INVALID_ARGUMENT whose
// message starts with the `op` passed in ("Conv: ...").
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/sdk/checked.h"
#include "loom/sdk/host.h"
#include "loom/sdk/node.h"

namespace loom::sdk {

enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

// The auto_pad value `s` names ("" counts as NOTSET), or nullopt when it is
// none of NOTSET, VALID, SAME_UPPER, SAME_LOWER.
inline std::optional<AutoPad> find_auto_pad(std::string_view s) {
  if (s.empty() || s == "NOTSET") return AutoPad::kNotSet;
  if (s == "VALID") return AutoPad::kValid;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  return std::nullopt;
}

// As find_auto_pad; an unknown value is an error naming `op`.
inline AutoPad parse_auto_pad(std::string_view s, std::string_view op) {
  if (const auto a = find_auto_pad(s)) return *a;
  fail_invalid(std::string(op) + ": unknown auto_pad '" + std::string(s) + "'");
}

// Window attributes as written on the node (empty vectors when absent).
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
};

// kernel_shape, strides, dilations, pads, auto_pad and ceil_mode of `n`.
inline WindowAttrs window_attrs_of(const Node& n, std::string_view op) {
  WindowAttrs a;
  a.kernel = n.attr_ints("kernel_shape");
  a.strides = n.attr_ints("strides");
  a.dilations = n.attr_ints("dilations");
  a.pads = n.attr_ints("pads");
  a.auto_pad = parse_auto_pad(n.attr_string("auto_pad", "NOTSET"), op);
  a.ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  return a;
}

// Resolved geometry of a forward window op (Conv, pooling): `in` is the
// input's spatial shape, `out` the output's; pads are non-negative.
struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;
  size_t rank() const { return in.size(); }
};

namespace window_detail {

inline std::vector<int64_t> or_default(const std::vector<int64_t>& v, size_t n, int64_t fallback) {
  return v.empty() ? std::vector<int64_t>(n, fallback) : v;
}

// Extent of a dilated kernel: (k - 1) * dilation + 1 (k, dilation > 0).
inline int64_t extent(int64_t k, int64_t dilation, const std::string& what) {
  return checked_add(checked_mul(k - 1, dilation, what), 1, what);
}

}  // namespace window_detail

// Output sizes and pads of a forward window op over spatial dims `in`.
// `kernel` (Conv: W's spatial dims) overrides a.kernel when non-empty; a
// kernel_shape attribute that disagrees with it is an error. Missing
// strides and dilations are 1, missing pads 0.
//  - NOTSET: out = floor((in + pads - extent) / stride) + 1, the padded
//    input at least one extent long; with ceil_mode rounded up instead,
//    but the last window must start inside the input or the leading pad
//    (never in the trailing pad).
//  - VALID: as NOTSET with zero pads (ceil_mode applies alike).
//  - SAME_UPPER / SAME_LOWER: out = ceil(in / stride); the total pad
//    max(0, (out - 1) * stride + extent - in) is split in half with the odd
//    one at the end (UPPER) or the start (LOWER); ceil_mode is ignored.
inline Window resolve_window(const WindowAttrs& a, const std::vector<int64_t>& in,
                             const std::vector<int64_t>& kernel, std::string_view op) {
  namespace wd = window_detail;
  const size_t r = in.size();
  const std::string o(op);
  if (!kernel.empty() && !a.kernel.empty() && a.kernel != kernel)
    fail_invalid(o + ": kernel_shape attribute disagrees with the weights' spatial dims");
  Window g;
  g.in = in;
  g.kernel = kernel.empty() ? a.kernel : kernel;
  if (g.kernel.size() != r)
    fail_invalid(o + ": kernel_shape has " + std::to_string(g.kernel.size()) + " dims, input has " +
                 std::to_string(r) + " spatial dims");
  g.strides = wd::or_default(a.strides, r, 1);
  g.dilations = wd::or_default(a.dilations, r, 1);
  if (g.strides.size() != r) fail_invalid(o + ": strides must have one value per spatial dim");
  if (g.dilations.size() != r) fail_invalid(o + ": dilations must have one value per spatial dim");
  const std::vector<int64_t> pads = wd::or_default(a.pads, 2 * r, 0);
  if (pads.size() != 2 * r) fail_invalid(o + ": pads must have two values per spatial dim");
  const auto mid = pads.begin() + static_cast<std::ptrdiff_t>(r);
  g.pad_begin.assign(pads.begin(), mid);
  g.pad_end.assign(mid, pads.end());
  g.out.assign(r, 0);
  for (size_t d = 0; d < r; ++d) {
    const int64_t k = g.kernel[d], s = g.strides[d], dil = g.dilations[d], n = g.in[d];
    if (k <= 0 || s <= 0 || dil <= 0) fail_invalid(o + ": kernel, strides and dilations must be positive");
    if (g.pad_begin[d] < 0 || g.pad_end[d] < 0) fail_invalid(o + ": pads must be non-negative");
    if (n < 0) fail_invalid(o + ": spatial dim " + std::to_string(d) + " has negative size " + std::to_string(n));
    const std::string what = o + " window of spatial dim " + std::to_string(d);
    const int64_t eff = wd::extent(k, dil, what);
    if (a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower) {
      const int64_t out = checked_add(n, s - 1, what) / s;
      // (out - 1) * s < n: cannot overflow (-s when n is 0).
      const int64_t total = std::max<int64_t>(0, checked_sub(checked_add((out - 1) * s, eff, what), n, what));
      const int64_t small = total / 2, large = total - small;
      g.pad_begin[d] = a.auto_pad == AutoPad::kSameUpper ? small : large;
      g.pad_end[d] = a.auto_pad == AutoPad::kSameUpper ? large : small;
      g.out[d] = out;
      continue;
    }
    if (a.auto_pad == AutoPad::kValid) g.pad_begin[d] = g.pad_end[d] = 0;
    const int64_t padded = checked_add(checked_add(n, g.pad_begin[d], what), g.pad_end[d], what);
    const int64_t span = padded - eff;  // both non-negative: cannot overflow
    if (span < 0)
      fail_invalid(o + ": spatial dim " + std::to_string(d) + " of size " + std::to_string(n) + " (padded " +
                   std::to_string(padded) + ") is smaller than the kernel extent " + std::to_string(eff));
    int64_t out = (a.ceil_mode ? checked_add(span, s - 1, what) / s : span / s) + 1;
    // (out - 1) * s <= span + s - 1 and n + pad_begin <= padded: both in range.
    if (a.ceil_mode && (out - 1) * s >= n + g.pad_begin[d]) --out;
    g.out[d] = out;
  }
  return g;
}

// ConvTranspose's attributes: the window's (ceil_mode unused) and its own.
struct TransposeAttrs {
  WindowAttrs window;
  std::vector<int64_t> output_padding, output_shape;
};

inline TransposeAttrs transpose_attrs_of(const Node& n, std::string_view op) {
  TransposeAttrs t;
  t.window = window_attrs_of(n, op);
  t.output_padding = n.attr_ints("output_padding");
  t.output_shape = n.attr_ints("output_shape");
  return t;
}

// Resolved ConvTranspose geometry: `in` is X's spatial shape, `out` Y's.
// Pads may be negative (an output_shape larger than the full result).
struct TransposeWindow {
  std::vector<int64_t> in, kernel, strides, dilations, output_padding, pad_begin, pad_end, out;
  size_t rank() const { return in.size(); }
};

// floor(v / 2) for any v, as the ONNX reference splits ConvTranspose pads.
inline int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -(-(v + 1) / 2) - 1; }

// ConvTranspose over X's spatial dims `in` with W's spatial dims `kernel`
// (a kernel_shape attribute must agree with it). Per dim the full result is
// full = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1:
//  - output_shape (its spatial dims, with or without the N, C prefix) or
//    SAME_* (in * stride) fixes Y's size; the pads total full - size, split
//    with floor_half: SAME_UPPER puts the extra at the end, anything else
//    at the start;
//  - VALID: Y is `full`, no pads;
//  - NOTSET: explicit pads, Y is full - pad_begin - pad_end.
// X's spatial dims must be non-empty and Y's sizes non-negative.
inline TransposeWindow resolve_conv_transpose(const TransposeAttrs& t, const std::vector<int64_t>& in,
                                              const std::vector<int64_t>& kernel, std::string_view op) {
  namespace wd = window_detail;
  const WindowAttrs& a = t.window;
  const size_t r = in.size();
  const std::string o(op);
  if (!a.kernel.empty() && a.kernel != kernel)
    fail_invalid(o + ": kernel_shape attribute disagrees with the weights' spatial dims");
  TransposeWindow g;
  g.in = in;
  g.kernel = kernel;
  g.strides = wd::or_default(a.strides, r, 1);
  g.dilations = wd::or_default(a.dilations, r, 1);
  g.output_padding = wd::or_default(t.output_padding, r, 0);
  const std::vector<int64_t> pads = wd::or_default(a.pads, 2 * r, 0);
  std::vector<int64_t> oshape = t.output_shape;
  if (oshape.size() == r + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  if (g.kernel.size() != r || g.strides.size() != r || g.dilations.size() != r || g.output_padding.size() != r ||
      pads.size() != 2 * r || (!oshape.empty() && oshape.size() != r))
    fail_invalid(o + ": kernel, strides, dilations, output_padding, pads or output_shape have the wrong length");
  g.pad_begin.assign(r, 0);
  g.pad_end.assign(r, 0);
  g.out.assign(r, 0);
  const bool same = a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower;
  for (size_t d = 0; d < r; ++d) {
    const int64_t k = g.kernel[d], s = g.strides[d], dil = g.dilations[d], n = g.in[d];
    if (k <= 0 || s <= 0 || dil <= 0) fail_invalid(o + ": kernel, strides and dilations must be positive");
    if (n < 1)
      fail_invalid(o + ": spatial dim " + std::to_string(d) + " of X has size " + std::to_string(n) +
                   " (at least 1 is needed)");
    const std::string what = o + " output of spatial dim " + std::to_string(d);
    const int64_t stretched = checked_add(checked_mul(s, n - 1, what), g.output_padding[d], what);
    const int64_t full = checked_add(stretched, wd::extent(k, dil, what), what);
    if (!oshape.empty() || same) {
      const int64_t target = !oshape.empty() ? oshape[d] : checked_mul(n, s, what);
      const int64_t total = checked_sub(full, target, what);
      if (a.auto_pad == AutoPad::kSameUpper) {
        g.pad_begin[d] = floor_half(total);
        g.pad_end[d] = total - g.pad_begin[d];
      } else {
        g.pad_end[d] = floor_half(total);
        g.pad_begin[d] = total - g.pad_end[d];
      }
      g.out[d] = target;
    } else if (a.auto_pad == AutoPad::kValid) {
      g.out[d] = full;
    } else {
      g.pad_begin[d] = pads[d];
      g.pad_end[d] = pads[d + r];
      g.out[d] = checked_sub(checked_sub(full, pads[d], what), pads[d + r], what);
    }
    if (g.out[d] < 0) fail_invalid(o + ": computed output size is negative");
  }
  return g;
}

}  // namespace loom::sdk
