// When oneDNN's resampling_forward computes exactly what an ONNX Resize
// (opsets 11..13) or Upsample (opset 9) node computes, and the output dims it
// then has. Shared by the claim (static dims, -1 = unknown) and the builder
// (concrete dims), so both apply one rule.
//
// oneDNN 2.6 maps an output index o to the source coordinate
// (o + 0.5) * in / out - 0.5: linear interpolates there (clamped to the
// edges), nearest rounds it half away from zero. That equals ONNX
//  - linear + half_pixel, when the ONNX scale equals out / in (sizes given,
//    or scale * in whole); pytorch_half_pixel too while out > 1;
//  - nearest + asymmetric + floor, for whole upscale factors k: o = q*k + r
//    gives q + (r + 0.5) / k - 0.5, strictly within q +- 0.5, so it rounds
//    to q = floor(o / k). Any other factor (1.5, 0.5) rounds differently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "node_spec.h"

namespace loom::onednn {

// Empty when oneDNN matches the node for input dims `in` (rank 4, -1 for
// unknown), and then sets *out (-1 where unknown); otherwise why not.
// Scales or sizes computed when the model runs pass here with H and W
// unknown; the builder checks again with their values (resolve_resize_inputs).
std::string resize_mismatch(const NodeSpec& n, const std::vector<int64_t>& in, std::vector<int64_t>* out);

// True for linear interpolation, false for nearest (valid once resize_mismatch passed).
bool resize_is_linear(const NodeSpec& n);

// The input indices of the node's scales and then sizes (Upsample has no sizes).
std::vector<size_t> resize_parameter_inputs(const NodeSpec& n);

}  // namespace loom::onednn
