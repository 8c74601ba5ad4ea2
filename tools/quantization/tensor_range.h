// TensorRange: what calibration concluded about one tensor.
#pragma once

#include <limits>
#include <vector>

namespace loom::quant {

struct TensorRange {
  // The quantization range, low <= high, both finite.
  float low = 0.0f;
  float high = 0.0f;
  // Histogram methods (empty for MinMax): the bin counts and their
  // hist.size() + 1 ascending edges; bin i counts values in
  // [bin_edges[i], bin_edges[i+1]), the last bin also its right edge.
  // Percentile with symmetric=true histograms |x|, the others x.
  std::vector<double> hist;
  std::vector<float> bin_edges;
  // Distribution only (NaN otherwise): mean and standard deviation of the
  // histogram's bin centres weighted by their counts (ORT's _avg_std).
  double mean = std::numeric_limits<double>::quiet_NaN();
  double stddev = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace loom::quant
