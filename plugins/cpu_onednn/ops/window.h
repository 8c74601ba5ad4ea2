// Sliding-window geometry shared by convolution and pooling: ONNX pads,
// auto_pad, strides, dilations and ceil_mode turned into the explicit
// begin/end paddings and output sizes oneDNN expects.
#pragma once

#include <cstdint>
#include <vector>

#include "node_spec.h"

namespace loom::onednn {

struct Window {
  std::vector<int64_t> kernel, strides, dilations;  // ONNX dilations (1 = dense)
  std::vector<int64_t> pad_begin, pad_end;
  std::vector<int64_t> output;                      // spatial output sizes

  // oneDNN counts dilation from 0.
  std::vector<int64_t> dnnl_dilations() const {
    std::vector<int64_t> d;
    for (int64_t x : dilations) d.push_back(x - 1);
    return d;
  }
};

// For convolution and pooling over `input` spatial sizes with `kernel`.
// ceil_mode rounds output sizes up (pooling), dropping a last window that
// would start in the end padding, and widens the end padding to match.
Window forward_window(const NodeSpec& n, const std::vector<int64_t>& input, const std::vector<int64_t>& kernel,
                      bool ceil_mode);

}  // namespace loom::onednn
