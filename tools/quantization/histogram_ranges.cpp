#include "quantization/histogram_ranges.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace loom::quant {
namespace {

// ORT clamps a histogram threshold to the observed extremes.
FloatRange clamp_to_observed(FloatRange r, const HistogramCollector& h) {
  if (r.low < h.min()) r.low = h.min();
  if (r.high > h.max()) r.high = h.max();
  return r;
}

}  // namespace

FloatRange percentile_range(const HistogramCollector& histogram, double percentile, bool symmetric) {
  const auto& hist = histogram.hist();
  const auto& edges = histogram.edges();
  int64_t total = 0;
  for (int64_t c : hist) total += c;
  // numpy.cumsum(hist / total): each share rounded first, then summed in
  // order, which is what makes the searchsorted below reproducible.
  std::vector<double> cdf(hist.size());
  double running = 0.0;
  for (size_t i = 0; i < hist.size(); ++i) {
    running += static_cast<double>(hist[i]) / static_cast<double>(total);
    cdf[i] = running;
  }
  auto left_edge_reaching = [&](double q) {
    const size_t idx = static_cast<size_t>(std::lower_bound(cdf.begin(), cdf.end(), q) - cdf.begin());
    return edges[std::min(idx, edges.size() - 1)];
  };
  FloatRange r;
  if (symmetric) {
    const float e = left_edge_reaching(percentile / 100.0);
    r = {-e, e};
  } else {
    const double cut = (100.0 - percentile) / 200.0;
    r = {left_edge_reaching(cut), left_edge_reaching(1.0 - cut)};
  }
  return clamp_to_observed(r, histogram);
}

double float8_e4m3fn_stddev() {
  // Decode every byte: sign, 4 exponent bits (bias 7), 3 mantissa bits; no
  // infinities, S.1111.111 is NaN.
  std::vector<double> values;
  for (int b = 0; b < 256; ++b) {
    const int e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7) continue;
    double v = e == 0 ? (m / 8.0) * std::ldexp(1.0, -6) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
    values.push_back((b & 0x80) ? -v : v);
  }
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double var = 0.0;
  for (double v : values) var += (v - mean) * (v - mean);
  return std::sqrt(var / static_cast<double>(values.size()));
}

DistributionStats distribution_stats(const HistogramCollector& histogram) {
  const auto& hist = histogram.hist();
  const auto& edges = histogram.edges();
  // ORT's _avg_std(power=1): bin centres in float32, their squares in
  // float32, the count-weighted sums in float64.
  double count = 0.0, sum = 0.0, sum_sq = 0.0;
  for (size_t i = 0; i < hist.size(); ++i) {
    const float centre = (edges[i] + edges[i + 1]) * 0.5f;
    const float centre_sq = centre * centre;
    const double c = static_cast<double>(hist[i]);
    count += c;
    sum += c * centre;
    sum_sq += c * centre_sq;
  }
  const double avg = sum / count;
  // Rounding can make E[x^2] - avg^2 slightly negative for a constant
  // tensor, where numpy would give NaN; 0 is the meaningful answer.
  const double std = std::sqrt(std::max(0.0, sum_sq / count - avg * avg));
  DistributionStats out;
  out.mean = static_cast<float>(avg);
  out.stddev = static_cast<float>(std);
  constexpr float kFloat8E4M3FnMax = 448.0f;
  const float scale = static_cast<float>(out.stddev) / static_cast<float>(float8_e4m3fn_stddev());
  out.range = {-kFloat8E4M3FnMax * scale, kFloat8E4M3FnMax * scale};
  return out;
}

}  // namespace loom::quant
