// MinMaxCollector: one tensor's range under ORT's MinMaxCalibrater.
//
// Each batch contributes its min and max (made [-m, m], m = max(|min|,
// |max|), first when symmetric). Plain: the global min and max. Moving
// average: the first batch initialises the range, each later one moves it
// by averaging_constant towards the batch's (in float32, as ORT's numpy
// arithmetic does). That is ORT's merge_range with max_intermediate_outputs
// = 1; with its default (None) ORT instead averages the per-batch min and
// max of all batches of one collect_data call with equal weights.
// Not thread-safe.
#pragma once

namespace loom::quant {

class MinMaxCollector {
 public:
  MinMaxCollector(bool symmetric, bool moving_average, float averaging_constant)
      : symmetric_(symmetric), moving_average_(moving_average), averaging_constant_(averaging_constant) {}

  // One batch's min and max (finite, batch_min <= batch_max).
  void collect(float batch_min, float batch_max);

  bool empty() const { return empty_; }
  float low() const { return low_; }
  float high() const { return high_; }

 private:
  bool symmetric_, moving_average_;
  float averaging_constant_;
  bool empty_ = true;
  float low_ = 0.0f, high_ = 0.0f;
};

}  // namespace loom::quant
