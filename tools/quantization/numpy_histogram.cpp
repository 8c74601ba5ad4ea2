#include "quantization/numpy_histogram.h"

#include <algorithm>
#include <cmath>

namespace loom::quant {

std::vector<float> equal_width_edges(double first, double last, int num_bins) {
  if (first == last) {
    first -= 0.5;
    last += 0.5;
  }
  // numpy.linspace: arange(num) * step + start in double (float32 range ends
  // promote to double in numpy 1.x), then astype(float32); the endpoint is
  // assigned, not computed.
  const double step = (last - first) / num_bins;
  std::vector<float> edges(static_cast<size_t>(num_bins) + 1);
  for (int i = 0; i < num_bins; ++i) edges[i] = static_cast<float>(static_cast<double>(i) * step + first);
  edges[num_bins] = static_cast<float>(last);
  return edges;
}

double float32_arange_length(float start, float stop, float step) {
  // numpy computes the length from the scalars' own (float32) arithmetic.
  const float span = (stop - start) / step;
  const double length = std::ceil(static_cast<double>(span));
  return length > 0 ? length : 0.0;
}

std::vector<double> float32_arange(float start, float stop, float step) {
  // numpy fills element 1 with start + step as float32, then the rest in
  // double from the delta between the first two.
  const double length = float32_arange_length(start, stop, step);
  if (!(length > 0)) return {};
  const auto n = static_cast<size_t>(length);
  std::vector<double> out(n);
  out[0] = start;
  if (n == 1) return out;
  const float second = start + step;
  out[1] = second;
  const double delta = static_cast<double>(second) - static_cast<double>(start);
  for (size_t i = 2; i < n; ++i) out[i] = static_cast<double>(start) + static_cast<double>(i) * delta;
  return out;
}

void count_into_bins(std::span<const double> edges, std::span<const float> values, std::vector<int64_t>& counts) {
  const size_t num_bins = edges.size() - 1;
  const double lo = edges.front(), hi = edges.back();
  for (float v : values) {
    const double x = v;
    if (!(x >= lo && x <= hi)) continue;
    // The bin whose left edge is the last one <= x (numpy's searchsorted
    // 'right'); x == hi belongs to the last bin.
    size_t i = static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), x) - edges.begin());
    i = i == 0 ? 0 : i - 1;
    if (i >= num_bins) i = num_bins - 1;
    ++counts[i];
  }
}

}  // namespace loom::quant
