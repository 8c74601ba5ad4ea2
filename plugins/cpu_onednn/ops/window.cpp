#include "ops/window.h"

#include <algorithm>

namespace loom::onednn {

sdk::WindowAttrs window_attrs(const NodeSpec& n) {
  sdk::WindowAttrs a;
  a.strides = n.attr_ints("strides");
  a.dilations = n.attr_ints("dilations");
  a.pads = n.attr_ints("pads");
  a.auto_pad = sdk::parse_auto_pad(n.attr_string("auto_pad", "NOTSET"), error_prefix(n));
  return a;
}

Window forward_window(const NodeSpec& n, const std::vector<int64_t>& input, const std::vector<int64_t>& kernel,
                      bool ceil_mode) {
  sdk::WindowAttrs a = window_attrs(n);
  a.ceil_mode = ceil_mode;
  const std::string op = error_prefix(n);
  Window w(sdk::resolve_window(a, input, kernel, op));
  for (int64_t o : w.out)
    if (o == 0) n.fail("empty output (a spatial dim of the input is empty)");
  if (!ceil_mode) return w;
  // oneDNN wants in + pad_begin + pad_end to cover every window: the end
  // padding grows to where the last one ends. (A no-op for SAME_*.)
  const std::string what = "window of " + n.label();
  for (size_t i = 0; i < w.rank(); ++i) {
    const int64_t extent = sdk::checked_add(sdk::checked_mul(w.kernel[i] - 1, w.dilations[i], what), 1, what);
    const int64_t last_start = sdk::checked_mul(w.out[i] - 1, w.strides[i], what);
    // last_start < in + pad_begin, so this is below extent: no overflow.
    w.pad_end[i] = std::max(w.pad_end[i], last_start - w.pad_begin[i] - w.in[i] + extent);
  }
  return w;
}

}  // namespace loom::onednn
