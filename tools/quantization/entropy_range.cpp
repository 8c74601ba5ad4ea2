#include "quantization/entropy_range.h"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace loom::quant {
namespace {

// ORT's smooth_distribution, in float32 as it computes it; nullopt when
// every entry is 0 (ORT returns None and scores the window as infinity).
std::optional<std::vector<float>> smooth_distribution(const std::vector<int64_t>& p) {
  constexpr double kEps = 0.0001;
  size_t zeros = 0;
  for (int64_t v : p) zeros += v == 0;
  const size_t nonzeros = p.size() - zeros;
  if (nonzeros == 0) return std::nullopt;
  const float eps = static_cast<float>(kEps);
  const float eps1 = static_cast<float>(kEps * static_cast<double>(zeros) / static_cast<double>(nonzeros));
  std::vector<float> out(p.size());
  for (size_t i = 0; i < p.size(); ++i) out[i] = static_cast<float>(p[i]) + (p[i] == 0 ? eps : -eps1);
  return out;
}

// scipy.stats.entropy(p, q): both normalised, sum of p log(p / q). Both are
// positive everywhere after smoothing. Computed in double; scipy's float32
// differs only in the last digits.
double kl_divergence(const std::vector<float>& p, const std::vector<float>& q) {
  double sp = 0.0, sq = 0.0;
  for (float v : p) sp += v;
  for (float v : q) sq += v;
  double kl = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double pi = p[i] / sp, qi = q[i] / sq;
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

}  // namespace

FloatRange entropy_range(const HistogramCollector& histogram, int num_quantized_bins) {
  const auto& hist = histogram.hist();
  const auto& edges = histogram.edges();
  const int64_t num_bins = static_cast<int64_t>(hist.size());
  const int64_t zero_bin_index = num_bins / 2;
  const int64_t half_quantized = num_quantized_bins / 2;

  // Prefix sums make the outside counts O(1) per window.
  std::vector<int64_t> prefix(hist.size() + 1, 0);
  for (size_t i = 0; i < hist.size(); ++i) prefix[i + 1] = prefix[i] + hist[i];

  double best_kl = std::numeric_limits<double>::infinity();
  FloatRange best{edges[zero_bin_index - half_quantized],
                  edges[std::min(zero_bin_index + half_quantized + 1, num_bins)]};
  bool have_best = false;
  std::vector<int64_t> quantized(num_quantized_bins);
  for (int64_t i = half_quantized; i <= zero_bin_index; ++i) {
    const int64_t start = zero_bin_index - i;
    const int64_t end = std::min(zero_bin_index + i + 1, num_bins);
    const int64_t size = end - start;
    const int64_t* sliced = hist.data() + start;

    std::vector<int64_t> p(sliced, sliced + size);
    p.front() += prefix[start];
    p.back() += prefix[num_bins] - prefix[end];

    const int64_t merged = size / num_quantized_bins;
    for (int64_t j = 0; j < num_quantized_bins; ++j) {
      int64_t s = 0;
      for (int64_t k = j * merged; k < (j + 1) * merged; ++k) s += sliced[k];
      quantized[j] = s;
    }
    for (int64_t k = num_quantized_bins * merged; k < size; ++k) quantized[num_quantized_bins - 1] += sliced[k];

    // The leftover bins past num_quantized_bins * merged stay 0 in q, as in ORT.
    std::vector<int64_t> q(size, 0);
    for (int64_t j = 0; j < num_quantized_bins; ++j) {
      int64_t norm = 0;
      for (int64_t k = j * merged; k < (j + 1) * merged; ++k) norm += p[k] != 0;
      if (norm == 0) continue;
      const auto value = static_cast<int64_t>(static_cast<double>(quantized[j]) / static_cast<double>(norm));
      for (int64_t k = j * merged; k < (j + 1) * merged; ++k) q[k] = value;
    }

    const auto ps = smooth_distribution(p);
    const auto qs = smooth_distribution(q);
    const double kl = (ps && qs) ? kl_divergence(*ps, *qs) : std::numeric_limits<double>::infinity();
    // numpy.argmin: the first minimum wins; all-infinite keeps the first window.
    if (!have_best || kl < best_kl) {
      best_kl = kl;
      best = {edges[start], edges[end]};
      have_best = true;
    }
  }
  if (best.low < histogram.min()) best.low = histogram.min();
  if (best.high > histogram.max()) best.high = histogram.max();
  return best;
}

}  // namespace loom::quant
