// From a collected histogram to a range, per ORT's HistogramCollector
// (compute_entropy, compute_percentile, compute_distribution). Each
// function takes a non-empty collector. Entropy lives in entropy_range.h.
#pragma once

#include "quantization/histogram_collector.h"

namespace loom::quant {

struct FloatRange {
  float low = 0.0f;
  float high = 0.0f;
};

// Percentile: cdf = cumulative sum of hist / total. Symmetric (a histogram
// of |x|): [-e, e] with e the left edge of the first bin where the cdf
// reaches percentile/100. Otherwise the left edges of the first bins
// reaching (100 - percentile)/200 and 1 - that. Then, as ORT, low is raised
// to the observed min and high lowered to the observed max where they
// overshoot. percentile in [0, 100].
FloatRange percentile_range(const HistogramCollector& histogram, double percentile, bool symmetric);

// Distribution (ORT scenario "same"): mean and standard deviation of the bin
// centres weighted by the counts, rounded to float32 as ORT returns them.
// ORT returns no range for this method; its quantizer (float8 E4M3FN only)
// uses zero point 0 and scale = stddev / std(all finite E4M3FN values).
// The range given here is what that scale and zero point represent,
// [-448 * scale, 448 * scale] (448 = E4M3FN's largest value), so a loom
// quantizer given [low, high] picks the same grid as ORT. Like ORT's, it
// is centred on 0 whatever the mean (data far from 0 is poorly served).
struct DistributionStats {
  double mean = 0.0;
  double stddev = 0.0;
  FloatRange range;
};
DistributionStats distribution_stats(const HistogramCollector& histogram);

// std of the 254 finite float8 E4M3FN values (both zeros included), the
// denominator of ORT's compute_scale_zp_float8 (about 100.06).
double float8_e4m3fn_stddev();

}  // namespace loom::quant
