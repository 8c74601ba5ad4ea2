// A one-file SVG picture of calibration histograms, for a person checking
// what `loom calibrate` chose: one small panel per tensor, for the
// max_tensors tensors with the widest [low, high] (ties by name), in a grid.
// Each panel shows the tensor's histogram as bars (bar height on a log
// scale, 1 + count, so lone outliers stay visible; adjacent bins merged to
// fit the panel), its name, and the chosen range as two red lines labelled
// with [low, high]. A tensor without a histogram (MinMax) shows the range
// alone. The SVG is self-contained (no scripts, fonts or links); names are
// XML-escaped.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "loom/status.h"
#include "quantization/tensor_range.h"

namespace loom::quant {

constexpr size_t kDefaultSvgTensors = 12;

// The SVG text; an empty map gives a picture saying there is nothing to show.
std::string histogram_svg(const std::map<std::string, TensorRange>& ranges, size_t max_tensors = kDefaultSvgTensors);

// Writes histogram_svg() to `path`, replacing it; kFail naming the path when
// it cannot be written.
Status write_histogram_svg(const std::string& path, const std::map<std::string, TensorRange>& ranges,
                           size_t max_tensors = kDefaultSvgTensors);

}  // namespace loom::quant
