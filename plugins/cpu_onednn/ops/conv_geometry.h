// Convolution geometry shared by the float (conv.cpp) and int8
// (qlinear_conv.cpp) builders: output shape and explicit paddings from the
// ONNX attributes, and the weights as oneDNN sees them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ops/window.h"
#include "program_builder.h"

namespace loom::onednn {

struct ConvShape {
  int64_t group, out_channels;
  Window window;
  std::vector<int64_t> dst_dims;
};

// Shape of a 2-D (transposed) convolution of input dims `x` with weights
// dims `w` under `n`'s attributes (group, strides, pads, dilations,
// auto_pad, kernel_shape, output_padding); fails naming `n` on a mismatch.
ConvShape conv_shape(const NodeSpec& n, const std::vector<int64_t>& x, const std::vector<int64_t>& w, bool transposed);

// Whether the convolution is pointwise: group 1 and a 1x1 kernel with
// stride 1, no dilation and no padding (a matrix product per pixel).
bool is_pointwise(const ConvShape& s);

// Conv node `n`'s bias as `channels` floats (zeros when it has none), or
// nullopt when it is not a constant of that many values. For host steps,
// which read it as plain floats.
std::optional<std::vector<float>> constant_conv_bias(ProgramBuilder& b, const NodeSpec& n, int64_t channels);

// The (de)convolution weights `w` (any element type) as oneDNN dims over the
// ONNX bytes: grouped weights get a leading group dim; ConvTranspose's ONNX
// layout (C_in, C_out/g, ...) is described with strides rather than copied.
ValueId weights_view(ProgramBuilder& b, ValueId w, int64_t group, bool transposed);

// f32 channels-last (N, C, H, W as NHWC bytes): the layout of the
// depthwise step and of convolutions that feed it band by band.
inline dnnl::memory::desc nhwc_desc(const std::vector<int64_t>& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc);
}

}  // namespace loom::onednn
