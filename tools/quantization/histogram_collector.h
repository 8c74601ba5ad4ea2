// HistogramCollector: one tensor's histogram across calibration batches, as
// ONNX Runtime's HistogramCollector (calibrate.py) keeps it.
//
// kValue (entropy, distribution, percentile without symmetric;
// collect_value): the first batch is binned into num_bins equal bins over
// [-t, t], t = max(|min|, |max|). A later batch whose t fits is binned into
// the same bins; one that is wider grows the histogram by whole old-width
// bins on both sides (merge_histogram), so the old counts keep their bins.
//
// kAbsolute (percentile with symmetric; collect_absolute_value): the first
// batch's |x| is binned into num_bins equal bins over [min|x|, max|x|]. A
// later batch whose max |x| lies beyond the last edge appends bins of the
// old width (numpy.arange, which may add one bin past the maximum). Like
// ORT, values below the first edge in later batches are not counted.
//
// Both track the raw min and max of everything collected. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "loom/status.h"

namespace loom::quant {

class HistogramCollector {
 public:
  enum class Mode { kValue, kAbsolute };

  // A histogram never grows past this many bins (32 MiB of counts): a far
  // outlier would otherwise ask for billions of old-width bins (ORT runs out
  // of memory there).
  static constexpr int64_t kMaxBins = int64_t{1} << 22;

  // 1 <= num_bins <= kMaxBins.
  HistogramCollector(Mode mode, int num_bins);

  // One batch: finite values only, at least one. kInvalidArgument, with the
  // histogram unchanged, when the batch would grow it past kMaxBins.
  Status collect(std::span<const float> values);

  bool empty() const { return hist_.empty(); }
  // hist().size() + 1 == edges().size() once something was collected.
  const std::vector<int64_t>& hist() const { return hist_; }
  const std::vector<float>& edges() const { return edges_; }
  float min() const { return min_; }
  float max() const { return max_; }

 private:
  Status collect_value(std::span<const float> values, float min_value, float max_value);
  Status collect_absolute(std::span<const float> values);

  Mode mode_;
  int num_bins_;
  std::vector<int64_t> hist_;
  std::vector<float> edges_;
  float min_ = 0.0f, max_ = 0.0f;
  // kValue: the half-width t of the histogram. ORT keeps it as numpy
  // float32 until a merge grows it, float64 after; the difference shows in
  // the float32 subtraction of the next merge, so it is tracked.
  double threshold_ = 0.0;
  bool threshold_is_float32_ = true;
};

}  // namespace loom::quant
