// The entropy method's threshold search (ORT's get_entropy_threshold, after
// TensorRT's KL calibration): over candidate windows of 2i+1 bins centred on
// the histogram's middle bin (i from num_quantized_bins/2 to
// num_bins/2), fold the outside counts into the window's end bins (p),
// quantize the window into num_quantized_bins merged bins and expand them
// back over p's non-empty bins (q, truncated to integers as ORT's int64
// array does), smooth both (zeros become 1e-4, the rest give up the same
// mass) and take the window with the least KL(p || q). The range is that
// window's outer edges, clamped to the observed min and max. Cost: about
// (bins / 2) windows of up to `bins` bins each, quadratic in the bin count.
#pragma once

#include "quantization/histogram_collector.h"
#include "quantization/histogram_ranges.h"

namespace loom::quant {

// histogram non-empty, 1 <= num_quantized_bins, and at least one window:
// hist().size() / 2 >= num_quantized_bins / 2.
FloatRange entropy_range(const HistogramCollector& histogram, int num_quantized_bins);

}  // namespace loom::quant
