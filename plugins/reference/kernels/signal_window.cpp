// Signal-processing family: the generalized cosine windows (BlackmanWindow,
// HammingWindow, HannWindow) and MelWeightMatrix, opset 17. Values are
// computed in double and converted to the `output_datatype` element type
// (float by default; integer types truncate toward zero like Cast).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/shape.h"
#include "kernels/signal_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
constexpr int kOpen = LOOM_OPSET_OPEN_END;
constexpr double kPi = 3.14159265358979323846;

// Writes `values` as a tensor of element type `dtype` (a numeric type).
void write_output(KernelContext& ctx, const Shape& shape, int32_t dtype, const std::vector<double>& values,
                  std::string_view op) {
  dispatch<NumericTypes>(dtype, op, [&](auto tag) {
    using T = decltype(tag);
    sdk::Tensor out = ctx.output(0, shape, dtype);
    if (out.size() == 0) return;
    T* p = out.mutable_data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = signal_from_double<T>(values[i]);
  });
}

// w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N), k in [0, size), with
// N = size when periodic (default) and size - 1 when symmetric (like the
// ONNX function bodies, a symmetric window of size 1 is 0/0 = NaN).
class CosineWindow {
 public:
  CosineWindow(const sdk::Node& node, std::string_view name, double a0, double a1, double a2)
      : name_(name),
        a0_(a0),
        a1_(a1),
        a2_(a2),
        periodic_(node.attr_int("periodic", 1) != 0),
        dtype_(static_cast<int32_t>(node.attr_int("output_datatype", LOOM_DTYPE_FLOAT))) {}

  void compute(KernelContext& ctx) const {
    const int64_t size = signal_scalar_int(ctx.required_input(0), name_, "size");
    if (size < 0) sdk::fail_invalid(name_ + ": size must be non-negative, got " + std::to_string(size));
    const double n = static_cast<double>(periodic_ ? size : size - 1);
    std::vector<double> w(static_cast<size_t>(size));
    for (int64_t k = 0; k < size; ++k) {
      const double angle = 2.0 * kPi * static_cast<double>(k) / n;
      w[static_cast<size_t>(k)] = a0_ - a1_ * std::cos(angle) + a2_ * std::cos(2.0 * angle);
    }
    write_output(ctx, {size}, dtype_, w, name_);
  }

 private:
  std::string name_;
  double a0_, a1_, a2_;
  bool periodic_;
  int32_t dtype_;
};

struct BlackmanWindow : CosineWindow {
  explicit BlackmanWindow(const sdk::Node& n) : CosineWindow(n, "BlackmanWindow", 0.42, 0.5, 0.08) {}
};
struct HammingWindow : CosineWindow {
  explicit HammingWindow(const sdk::Node& n) : CosineWindow(n, "HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0) {}
};
struct HannWindow : CosineWindow {
  explicit HannWindow(const sdk::Node& n) : CosineWindow(n, "HannWindow", 0.5, 0.5, 0.0) {}
};

double scalar_float(const sdk::ConstTensor& t, std::string_view name) {
  if (t.size() != 1)
    sdk::fail_invalid("MelWeightMatrix: input '" + std::string(name) + "' must be a scalar, got " +
                      std::to_string(t.size()) + " elements");
  double v = 0;
  dispatch<FloatTypes>(t.dtype(), "MelWeightMatrix", [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<double>(static_cast<compute_t<T>>(t.data<T>()[0]));
  });
  return v;
}

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

// Output [dft_length / 2 + 1, num_mel_bins]: triangular filters between
// num_mel_bins + 2 points equally spaced on the mel scale, each mapped to the
// spectrogram bin floor((dft_length + 1) * hz / sample_rate) as in the ONNX
// reference; rows of a triangle beyond the spectrum are dropped.
class MelWeightMatrix {
 public:
  explicit MelWeightMatrix(const sdk::Node& node)
      : dtype_(static_cast<int32_t>(node.attr_int("output_datatype", LOOM_DTYPE_FLOAT))) {}

  void compute(KernelContext& ctx) const {
    const std::string op = "MelWeightMatrix";
    const int64_t mel_bins = signal_scalar_int(ctx.required_input(0), op, "num_mel_bins");
    const int64_t dft_length = signal_scalar_int(ctx.required_input(1), op, "dft_length");
    const int64_t sample_rate = signal_scalar_int(ctx.required_input(2), op, "sample_rate");
    const double lower = scalar_float(ctx.required_input(3), "lower_edge_hertz");
    const double upper = scalar_float(ctx.required_input(4), "upper_edge_hertz");
    if (mel_bins < 0) sdk::fail_invalid(op + ": num_mel_bins must be non-negative, got " + std::to_string(mel_bins));
    if (dft_length < 1) sdk::fail_invalid(op + ": dft_length must be positive, got " + std::to_string(dft_length));
    if (sample_rate < 1)
      sdk::fail_invalid(op + ": sample_rate must be positive, got " + std::to_string(sample_rate));
    if (!(lower >= 0.0) || !std::isfinite(upper) || !(lower <= upper))
      sdk::fail_invalid(op + ": edges must satisfy 0 <= lower_edge_hertz <= upper_edge_hertz, got " +
                        std::to_string(lower) + " and " + std::to_string(upper));

    const int64_t spec_bins = dft_length / 2 + 1;
    // The weights table is the output's size, built in doubles first: refuse
    // sizes no real filter bank has before allocating it.
    constexpr int64_t kMaxTableElements = int64_t{1} << 28;
    int64_t table = 0;
    if (mel_bins > kMaxTableElements || __builtin_mul_overflow(spec_bins, mel_bins, &table) ||
        table > kMaxTableElements)
      sdk::fail_invalid(op + ": num_mel_bins " + std::to_string(mel_bins) + " x " + std::to_string(spec_bins) +
                        " spectrogram bins is too large a filter bank");
    const double low_mel = hz_to_mel(lower), high_mel = hz_to_mel(upper);
    const double mel_step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> points(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = mel_to_hz(static_cast<double>(i) * mel_step + low_mel);
      const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
      points[static_cast<size_t>(i)] = static_cast<int64_t>(std::min(bin, 4.0e18));
    }

    std::vector<double> w(static_cast<size_t>(spec_bins * mel_bins), 0.0);
    auto set = [&](int64_t row, int64_t col, double v) {
      if (row >= 0 && row < spec_bins) w[static_cast<size_t>(row * mel_bins + col)] = v;
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t left = points[static_cast<size_t>(i)], center = points[static_cast<size_t>(i) + 1],
                    right = points[static_cast<size_t>(i) + 2];
      if (center == left) {
        set(center, i, 1.0);
      } else {
        for (int64_t j = std::max<int64_t>(left, 0); j <= std::min(center, spec_bins - 1); ++j)
          set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
      }
      if (right > center)
        for (int64_t j = std::max<int64_t>(center, 0); j < std::min(right, spec_bins); ++j)
          set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
    write_output(ctx, {spec_bins, mel_bins}, dtype_, w, op);
  }

 private:
  int32_t dtype_;
};

}  // namespace

void register_signal_window_kernels(sdk::KernelRegistry& r) {
  r.add_class<BlackmanWindow>("", "BlackmanWindow", 17, kOpen);
  r.add_class<HammingWindow>("", "HammingWindow", 17, kOpen);
  r.add_class<HannWindow>("", "HannWindow", 17, kOpen);
  r.add_class<MelWeightMatrix>("", "MelWeightMatrix", 17, kOpen);
}

}  // namespace loom::reference
