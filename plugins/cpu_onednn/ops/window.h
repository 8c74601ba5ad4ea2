// Sliding-window geometry shared by convolution and pooling: the ONNX
// geometry (output sizes, explicit pads) as loom/sdk/window.h resolves it,
// in the form oneDNN expects.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "node_spec.h"

namespace loom::onednn {

// The SDK's resolved geometry (ONNX dilations: 1 = dense; `out`: spatial
// output sizes), with what oneDNN reads differently.
struct Window : sdk::Window {
  Window() = default;
  explicit Window(sdk::Window g) : sdk::Window(std::move(g)) {}

  // oneDNN counts dilation from 0.
  std::vector<int64_t> dnnl_dilations() const {
    std::vector<int64_t> d;
    for (int64_t x : dilations) d.push_back(x - 1);
    return d;
  }
};

// The prefix of errors about `n`, as NodeSpec::fail writes it; the SDK's
// geometry errors start with it.
inline std::string error_prefix(const NodeSpec& n) { return "cpu_onednn: " + n.label(); }

// `n`'s strides, dilations, pads and auto_pad (not kernel_shape or
// ceil_mode); fails on an unknown auto_pad.
sdk::WindowAttrs window_attrs(const NodeSpec& n);

// For convolution and pooling over `input` spatial sizes with `kernel`.
// ceil_mode rounds output sizes up (pooling; see sdk::resolve_window) and
// widens the end padding to cover the last window, as oneDNN requires.
Window forward_window(const NodeSpec& n, const std::vector<int64_t>& input, const std::vector<int64_t>& kernel,
                      bool ceil_mode);

}  // namespace loom::onednn
