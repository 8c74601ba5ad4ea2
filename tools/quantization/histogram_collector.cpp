#include "quantization/histogram_collector.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "quantization/numpy_histogram.h"

namespace loom::quant {
namespace {

// Python's (and numpy's) float floor division, which is not floor(a / b):
// it is computed from fmod so that a == b * (a // b) + a % b holds.
double python_floor_divide(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) div -= 1.0;
  }
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

std::vector<int64_t> count(const std::vector<double>& edges, std::span<const float> values) {
  std::vector<int64_t> counts(edges.size() - 1, 0);
  count_into_bins(edges, values, counts);
  return counts;
}

Status too_many_bins(double bins, float magnitude) {
  std::ostringstream m;
  m << "a value of magnitude " << magnitude << " would grow the histogram to " << bins << " bins (at most "
    << HistogramCollector::kMaxBins << "): the first batch set the bin width; use more bins or the minmax method";
  return invalid_argument(m.str());
}

}  // namespace

HistogramCollector::HistogramCollector(Mode mode, int num_bins) : mode_(mode), num_bins_(num_bins) {}

Status HistogramCollector::collect(std::span<const float> values) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const bool first = hist_.empty();
  LOOM_RETURN_IF_ERROR(mode_ == Mode::kAbsolute ? collect_absolute(values) : collect_value(values, *lo, *hi));
  min_ = first ? *lo : std::min(min_, *lo);
  max_ = first ? *hi : std::max(max_, *hi);
  return Status::ok();
}

Status HistogramCollector::collect_value(std::span<const float> values, float min_value, float max_value) {
  const bool first = hist_.empty();
  const float threshold = std::max(std::fabs(min_value), std::fabs(max_value));
  if (first) {
    edges_ = equal_width_edges(-static_cast<double>(threshold), threshold, num_bins_);
    hist_ = count(to_double(edges_), values);
    threshold_ = threshold;
    threshold_is_float32_ = true;
    return Status::ok();
  }
  if (static_cast<double>(threshold) <= threshold_) {
    // Same bins as before (ORT re-bins over [-t, t] with the old count,
    // which reproduces the old edges exactly).
    const auto counts = count(to_double(edges_), values);
    for (size_t i = 0; i < hist_.size(); ++i) hist_[i] += counts[i];
    return Status::ok();
  }
  const int old_num_bins = static_cast<int>(hist_.size());
  if (threshold_ == 0.0) {
    // Everything so far was 0: ORT re-bins over the new range with the old
    // bin count and adds the old counts position by position.
    edges_ = equal_width_edges(-static_cast<double>(threshold), threshold, old_num_bins);
    auto counts = count(to_double(edges_), values);
    for (size_t i = 0; i < hist_.size(); ++i) counts[i] += hist_[i];
    hist_ = std::move(counts);
    threshold_ = threshold;
    threshold_is_float32_ = true;
    return Status::ok();
  }
  const double old_stride = 2.0 * threshold_ / old_num_bins;
  const double widening = threshold_is_float32_
                              ? static_cast<double>(threshold - static_cast<float>(threshold_))
                              : static_cast<double>(threshold) - threshold_;
  const double half_increase = python_floor_divide(widening, old_stride) + 1.0;
  if (!(old_num_bins + 2.0 * half_increase <= static_cast<double>(kMaxBins)))
    return too_many_bins(old_num_bins + 2.0 * half_increase, threshold);
  const auto half_increased_bins = static_cast<int64_t>(half_increase);
  const int64_t new_num_bins = old_num_bins + 2 * half_increased_bins;
  const double new_threshold = static_cast<double>(half_increased_bins) * old_stride + threshold_;
  edges_ = equal_width_edges(-new_threshold, new_threshold, static_cast<int>(new_num_bins));
  auto counts = count(to_double(edges_), values);
  for (size_t i = 0; i < hist_.size(); ++i) counts[half_increased_bins + i] += hist_[i];
  hist_ = std::move(counts);
  threshold_ = new_threshold;
  threshold_is_float32_ = false;
  return Status::ok();
}

Status HistogramCollector::collect_absolute(std::span<const float> values) {
  std::vector<float> magnitudes(values.size());
  std::transform(values.begin(), values.end(), magnitudes.begin(), [](float v) { return std::fabs(v); });
  const auto [amin, amax] = std::minmax_element(magnitudes.begin(), magnitudes.end());
  if (hist_.empty()) {
    edges_ = equal_width_edges(*amin, *amax, num_bins_);
    hist_ = count(to_double(edges_), magnitudes);
    return Status::ok();
  }
  std::vector<double> edges = to_double(edges_);
  if (*amax > edges_.back()) {
    const float width = edges_[1] - edges_[0];
    const double extra_bins = float32_arange_length(edges_.back() + width, *amax + width, width);
    if (!(static_cast<double>(hist_.size()) + extra_bins <= static_cast<double>(kMaxBins)))
      return too_many_bins(static_cast<double>(hist_.size()) + extra_bins, *amax);
    const auto extra = float32_arange(edges_.back() + width, *amax + width, width);
    edges.insert(edges.end(), extra.begin(), extra.end());
  }
  // The extended edges are float64 in numpy while counting; ORT stores them
  // as float32 afterwards.
  auto counts = count(edges, magnitudes);
  for (size_t i = 0; i < hist_.size(); ++i) counts[i] += hist_[i];
  hist_ = std::move(counts);
  edges_.assign(edges.begin(), edges.end());
  return Status::ok();
}

}  // namespace loom::quant
