#include "quantization/min_max_collector.h"

#include <algorithm>
#include <cmath>

namespace loom::quant {

void MinMaxCollector::collect(float batch_min, float batch_max) {
  if (symmetric_) {
    // ORT symmetrises each computed range before merging it.
    const float m = std::max(std::fabs(batch_min), std::fabs(batch_max));
    batch_min = -m;
    batch_max = m;
  }
  if (empty_) {
    low_ = batch_min;
    high_ = batch_max;
    empty_ = false;
  } else if (moving_average_) {
    // float32 throughout: ORT's ranges are float32 numpy arrays and the
    // Python constant is cast to float32 when it multiplies them.
    low_ = low_ + averaging_constant_ * (batch_min - low_);
    high_ = high_ + averaging_constant_ * (batch_max - high_);
  } else {
    low_ = std::min(low_, batch_min);
    high_ = std::max(high_, batch_max);
  }
}

}  // namespace loom::quant
