#include "quantization/calibrator.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "quantization/entropy_range.h"
#include "quantization/histogram_ranges.h"

namespace loom::quant {

Calibrator::Calibrator(CalibrationOptions options)
    : options_(options), options_status_(validate(options)) {}

Status Calibrator::observe(const std::string& name, const float* data, int64_t count) {
  if (!options_status_) return options_status_.with_context("calibration options");
  if (count < 0) return invalid_argument("tensor '" + name + "': negative element count " + std::to_string(count));
  if (count == 0) return Status::ok();
  if (data == nullptr) return invalid_argument("tensor '" + name + "': null data for " + std::to_string(count) + " values");

  std::span<const float> values(data, static_cast<size_t>(count));
  // Copy only when something must be dropped; most activations are finite.
  std::vector<float> finite;
  if (!std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); })) {
    std::copy_if(values.begin(), values.end(), std::back_inserter(finite), [](float v) { return std::isfinite(v); });
    if (finite.empty()) return Status::ok();
    values = finite;
  }

  TensorState& state = tensors_[name];
  if (options_.method == CalibrationMethod::kMinMax) {
    if (!state.min_max)
      state.min_max.emplace(options_.symmetric, options_.moving_average, options_.averaging_constant);
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    state.min_max->collect(*lo, *hi);
  } else {
    if (!state.histogram) {
      // ORT histograms |x| only for a symmetric percentile.
      const bool absolute = options_.method == CalibrationMethod::kPercentile && options_.symmetric;
      state.histogram.emplace(absolute ? HistogramCollector::Mode::kAbsolute : HistogramCollector::Mode::kValue,
                              effective_num_bins(options_));
    }
    LOOM_RETURN_IF_ERROR(state.histogram->collect(values).with_context("tensor '" + name + "'"));
  }
  return Status::ok();
}

Expected<std::map<std::string, TensorRange>> Calibrator::compute() const {
  if (!options_status_) return options_status_.with_context("calibration options");
  std::map<std::string, TensorRange> out;
  for (const auto& [name, state] : tensors_) {
    TensorRange r;
    if (state.min_max) {
      r.low = state.min_max->low();
      r.high = state.min_max->high();
    } else if (state.histogram && !state.histogram->empty()) {
      const HistogramCollector& h = *state.histogram;
      FloatRange range;
      switch (options_.method) {
        case CalibrationMethod::kEntropy: range = entropy_range(h, options_.num_quantized_bins); break;
        case CalibrationMethod::kPercentile: range = percentile_range(h, options_.percentile, options_.symmetric); break;
        case CalibrationMethod::kDistribution: {
          const DistributionStats stats = distribution_stats(h);
          range = stats.range;
          r.mean = stats.mean;
          r.stddev = stats.stddev;
          break;
        }
        case CalibrationMethod::kMinMax: break;
      }
      r.low = range.low;
      r.high = range.high;
      r.hist.assign(h.hist().begin(), h.hist().end());
      r.bin_edges = h.edges();
    } else {
      continue;
    }
    out.emplace(name, std::move(r));
  }
  if (out.empty())
    return invalid_argument("calibration observed no finite values of any tensor (call observe() with data first)");
  return out;
}

}  // namespace loom::quant
