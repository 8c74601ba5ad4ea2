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
  for (size_t i = 0; i < r; ++i) {
    const int64_t extent = (kernel[i] - 1) * w.dilations[i] + 1;
    const int64_t s = w.strides[i];
    if (auto_pad == "VALID") {
      w.pad_begin[i] = w.pad_end[i] = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (input[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - input[i]);
      const int64_t small = total / 2;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_end[i] = total - w.pad_begin[i];
    }
    const int64_t span = input[i] + w.pad_begin[i] + w.pad_end[i] - extent;
    if (span < 0) n.fail("the kernel is larger than the padded input");
    int64_t out = span / s + 1;
    if (ceil_mode && auto_pad == "NOTSET") {
      out = (span + s - 1) / s + 1;
      if ((out - 1) * s >= input[i] + w.pad_begin[i]) --out;
      w.pad_end[i] = std::max(w.pad_end[i], (out - 1) * s + extent - input[i] - w.pad_begin[i]);
    }
    w.output[i] = out;
  }
  return w;
}

}  // namespace loom::onednn
