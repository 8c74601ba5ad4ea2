#include "ops/window.h"

#include <algorithm>

namespace loom::onednn {

Window forward_window(const NodeSpec& n, const std::vector<int64_t>& input, const std::vector<int64_t>& kernel,
                      bool ceil_mode) {
  const size_t r = input.size();
  Window w;
  w.kernel = kernel;
  w.strides = n.attr_ints("strides", std::vector<int64_t>(r, 1));
  w.dilations = n.attr_ints("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (w.strides.size() != r || w.dilations.size() != r || pads.size() != 2 * r)
    n.fail("strides, dilations and pads must match the spatial rank");
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  w.pad_begin.assign(pads.begin(), pads.begin() + r);
  w.pad_end.assign(pads.begin() + r, pads.end());
  w.output.resize(r);
  // Attribute values come from the model: every step is checked arithmetic.
  const std::string what = "window of " + n.label();
  using sdk::checked_add;
  using sdk::checked_mul;
  using sdk::checked_sub;
  for (size_t i = 0; i < r; ++i) {
    if (kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 || w.pad_begin[i] < 0 || w.pad_end[i] < 0)
      n.fail("kernel, strides and dilations must be positive and pads non-negative");
    const int64_t extent = checked_add(checked_mul(kernel[i] - 1, w.dilations[i], what), 1, what);
    const int64_t s = w.strides[i];
    if (auto_pad == "VALID") {
      w.pad_begin[i] = w.pad_end[i] = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = checked_add(input[i], s - 1, what) / s;
      const int64_t total =
          std::max<int64_t>(0, checked_sub(checked_add(checked_mul(out - 1, s, what), extent, what), input[i], what));
      const int64_t small = total / 2;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_end[i] = total - w.pad_begin[i];
    }
    const int64_t padded = checked_add(checked_add(input[i], w.pad_begin[i], what), w.pad_end[i], what);
    const int64_t span = padded - extent;  // both non-negative: cannot overflow
    if (span < 0) n.fail("the kernel is larger than the padded input");
    int64_t out = span / s + 1;
    if (ceil_mode && auto_pad == "NOTSET") {
      out = checked_add(span, s - 1, what) / s + 1;
      const int64_t last_start = checked_mul(out - 1, s, what);
      if (last_start >= input[i] + w.pad_begin[i]) --out;
      w.pad_end[i] = std::max(w.pad_end[i], checked_mul(out - 1, s, what) + extent - input[i] - w.pad_begin[i]);
    }
    w.output[i] = out;
  }
  return w;
}

}  // namespace loom::onednn
