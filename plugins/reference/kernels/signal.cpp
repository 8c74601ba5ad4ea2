// Signal-processing family: DFT and STFT (opset 17) on a double-precision
// complex FFT (iterative radix-2 for powers of two, Bluestein's chirp-z
// algorithm otherwise); windows and MelWeightMatrix are in signal_window.cpp.
//
// Complex tensors follow the ONNX convention: a trailing dimension of 2
// holds (real, imaginary); a trailing dimension of 1 is a real signal.
#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <utility>
#include <vector>

#include "common/shape.h"
#include "kernels/signal_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
using Complex = std::complex<double>;
constexpr int kOpen = LOOM_OPSET_OPEN_END;
constexpr double kPi = 3.14159265358979323846;

// Forward DFT of a fixed length n: X[k] = sum_j x[j] exp(-2 pi i j k / n).
// Immutable once built; scratch space is passed by the caller.
class FftPlan {
 public:
  explicit FftPlan(size_t n) : n_(n) {
    if (n_ <= 1) return;
    if ((n_ & (n_ - 1)) == 0) {
      twiddles_.resize(n_ / 2);
      for (size_t k = 0; k < n_ / 2; ++k)
        twiddles_[k] = std::polar(1.0, -2.0 * kPi * static_cast<double>(k) / static_cast<double>(n_));
      return;
    }
    // Bluestein: jk = (j^2 + k^2 - (k-j)^2) / 2, so X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k-j])
    // with c[j] = exp(-i pi j^2 / n): a circular convolution of length m >= 2n-1.
    size_t m = 1;
    while (m < 2 * n_ - 1) m <<= 1;
    inner_ = std::make_unique<FftPlan>(m);
    chirp_.resize(n_);
    const uint64_t two_n = 2 * static_cast<uint64_t>(n_);
    for (size_t j = 0; j < n_; ++j) {
      const uint64_t jj = (static_cast<uint64_t>(j) * j) % two_n;  // keeps the angle small and exact
      chirp_[j] = std::polar(1.0, -kPi * static_cast<double>(jj) / static_cast<double>(n_));
    }
    kernel_.assign(m, Complex(0, 0));
    kernel_[0] = std::conj(chirp_[0]);
    for (size_t t = 1; t < n_; ++t) kernel_[t] = kernel_[m - t] = std::conj(chirp_[t]);
    inner_->radix2(kernel_.data());
  }

  size_t size() const { return n_; }

  // In-place forward transform of a[0..n). `scratch` is resized as needed.
  void forward(Complex* a, std::vector<Complex>& scratch) const {
    if (n_ <= 1) return;
    if (!inner_) {
      radix2(a);
      return;
    }
    const size_t m = kernel_.size();
    scratch.assign(m, Complex(0, 0));
    Complex* w = scratch.data();
    for (size_t j = 0; j < n_; ++j) w[j] = a[j] * chirp_[j];
    inner_->radix2(w);
    for (size_t t = 0; t < m; ++t) w[t] = std::conj(w[t] * kernel_[t]);
    inner_->radix2(w);  // conj(fft(conj(y))) / m is the inverse FFT
    const double scale = 1.0 / static_cast<double>(m);
    for (size_t k = 0; k < n_; ++k) a[k] = std::conj(w[k]) * scale * chirp_[k];
  }

 private:
  // Power-of-two lengths only.
  void radix2(Complex* a) const {
    for (size_t i = 1, j = 0; i < n_; ++i) {
      size_t bit = n_ >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(a[i], a[j]);
    }
    for (size_t len = 2; len <= n_; len <<= 1) {
      const size_t half = len / 2, step = n_ / len;
      for (size_t i = 0; i < n_; i += len)
        for (size_t k = 0; k < half; ++k) {
          const Complex u = a[i + k], v = a[i + k + half] * twiddles_[k * step];
          a[i + k] = u + v;
          a[i + k + half] = u - v;
        }
    }
  }

  size_t n_;
  std::vector<Complex> twiddles_;  // radix-2: exp(-2 pi i k / n), k < n/2
  std::vector<Complex> chirp_;     // Bluestein: exp(-i pi j^2 / n)
  std::vector<Complex> kernel_;    // Bluestein: FFT of the circular conj(chirp) sequence
  std::unique_ptr<FftPlan> inner_;
};

// Transforms a[0..n) in place; the inverse is normalised by 1/n.
void transform(const FftPlan& plan, Complex* a, bool inverse, std::vector<Complex>& scratch) {
  const size_t n = plan.size();
  if (!inverse) {
    plan.forward(a, scratch);
    return;
  }
  for (size_t i = 0; i < n; ++i) a[i] = std::conj(a[i]);
  plan.forward(a, scratch);
  const double scale = 1.0 / static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) a[i] = std::conj(a[i]) * scale;
}

template <class T>
double to_double(T v) {
  return static_cast<double>(static_cast<compute_t<T>>(v));
}

// Checks the trailing (real, imaginary) dimension; returns it (1 or 2).
int64_t complex_dim(const Shape& s, std::string_view op, std::string_view name) {
  const int64_t c = s.back();
  if (c != 1 && c != 2)
    throw sdk::Error(std::string(op) + ": last dimension of '" + std::string(name) +
                         "' must be 1 (real) or 2 (complex), got " + std::to_string(c) + " (shape " +
                         shape_string(s) + ")",
                     LOOM_STATUS_INVALID_ARGUMENT);
  return c;
}

// DFT-17/20: input [batch, signal dims..., 1|2]; transforms along `axis`
// (a signal dimension, or the batch dimension 0: the attribute in 17, the
// optional scalar input 2 in 20, default -2 there), zero-padding or
// truncating to dft_length n; onesided keeps bins [0, n/2]. Inverse and
// onesided together is the inverse real transform (numpy's irfft): bins
// [0, n/2] of a Hermitian spectrum in, a real signal [.., n, .., 1] out.
class DftKernel {
 public:
  explicit DftKernel(const sdk::Node& node)
      : opset_(node.opset()),
        axis_(node.attr_int("axis", 1)),
        inverse_(node.attr_int("inverse", 0) != 0),
        onesided_(node.attr_int("onesided", 0) != 0) {}

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Shape in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    if (rank < 2)
      sdk::fail_invalid("DFT: input must have rank >= 2 ([batch, signal dims..., 1 or 2]), got shape " +
                        shape_string(in));
    const int64_t c = complex_dim(in, "DFT", "input");
    int64_t axis_given = axis_;
    if (opset_ >= 20) axis_given = ctx.input(2).exists() ? signal_scalar_int(ctx.input(2), "DFT", "axis") : -2;
    const int64_t axis = axis_given < 0 ? axis_given + rank : axis_given;
    if (axis < 0 || axis > rank - 2)
      sdk::fail_invalid("DFT: axis " + std::to_string(axis_given) + " out of range for input of rank " +
                        std::to_string(rank) + " (it must name a dimension before the last, complex one)");
    const int64_t n_in = in[static_cast<size_t>(axis)];
    const bool real_inverse = inverse_ && onesided_;
    int64_t n = real_inverse ? 2 * (n_in - 1) : n_in;  // numpy's irfft default length
    const sdk::ConstTensor len = ctx.input(1);
    if (len.exists()) {
      n = signal_scalar_int(len, "DFT", "dft_length");
      if (n < 1) sdk::fail_invalid("DFT: dft_length must be positive, got " + std::to_string(n));
    } else if (n < 1) {
      sdk::fail_invalid("DFT: signal length along axis " + std::to_string(axis) + " is " + std::to_string(n_in) +
                        ", too short (shape " + shape_string(in) + ")");
    }
    const int64_t out_n = onesided_ && !inverse_ ? n / 2 + 1 : n;
    Shape out_shape = in;
    out_shape[static_cast<size_t>(axis)] = out_n;
    out_shape.back() = real_inverse ? 1 : 2;
    const int64_t outer = dims_product(in, 0, static_cast<size_t>(axis));
    const int64_t inner = dims_product(in, static_cast<size_t>(axis) + 1, in.size() - 1);
    // The input bins read: all n, or for the real inverse the n/2 + 1 that
    // determine a Hermitian spectrum.
    const int64_t copy_n = std::min(real_inverse ? n / 2 + 1 : n, n_in);
    const int64_t out_c = out_shape.back();

    dispatch<FloatTypes>(x.dtype(), "DFT", [&](auto tag) {
      using T = decltype(tag);
      sdk::Tensor out = ctx.output(0, out_shape, x.dtype());
      if (out.size() == 0) return;
      const T* px = x.data<T>();
      T* py = out.mutable_data<T>();
      const FftPlan plan(static_cast<size_t>(n));
      std::vector<Complex> line(static_cast<size_t>(n)), scratch;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          std::fill(line.begin(), line.end(), Complex(0, 0));
          for (int64_t j = 0; j < copy_n; ++j) {
            const T* e = px + ((o * n_in + j) * inner + i) * c;
            line[static_cast<size_t>(j)] = Complex(to_double(e[0]), c == 2 ? to_double(e[1]) : 0.0);
          }
          if (real_inverse) make_hermitian(line);
          transform(plan, line.data(), inverse_, scratch);
          for (int64_t k = 0; k < out_n; ++k) {
            T* e = py + ((o * out_n + k) * inner + i) * out_c;
            e[0] = signal_from_double<T>(line[static_cast<size_t>(k)].real());
            if (out_c == 2) e[1] = signal_from_double<T>(line[static_cast<size_t>(k)].imag());
          }
        }
      }
    });
  }

 private:
  // Completes bins [0, n/2] into the spectrum of a real signal: bin n - k is
  // the conjugate of bin k, and the DC (and, for even n, Nyquist) bins are
  // real (their imaginary parts are ignored, as numpy's irfft does).
  static void make_hermitian(std::vector<Complex>& line) {
    const size_t n = line.size();
    line[0] = Complex(line[0].real(), 0);
    if (n % 2 == 0) line[n / 2] = Complex(line[n / 2].real(), 0);
    for (size_t k = n / 2 + 1; k < n; ++k) line[k] = std::conj(line[n - k]);
  }

  int64_t opset_;
  int64_t axis_;
  bool inverse_, onesided_;
};

// STFT-17: signal [batch, length, 1|2], frame_step, optional window
// [frame_length] and frame_length. Output [batch, frames, bins, 2] with
// frames = 1 + (length - frame_length) / frame_step and bins =
// frame_length / 2 + 1 when onesided (default), else frame_length.
class StftKernel {
 public:
  explicit StftKernel(const sdk::Node& node) : onesided_(node.attr_int("onesided", 1) != 0) {}

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Shape in = x.shape();
    if (in.size() != 3)
      sdk::fail_invalid("STFT: signal must have rank 3 ([batch, signal_length, 1 or 2]), got shape " +
                        shape_string(in));
    const int64_t c = complex_dim(in, "STFT", "signal");
    const int64_t batch = in[0], length = in[1];
    const int64_t step = signal_scalar_int(ctx.required_input(1), "STFT", "frame_step");
    if (step < 1) sdk::fail_invalid("STFT: frame_step must be positive, got " + std::to_string(step));

    const sdk::ConstTensor window = ctx.input(2);
    const sdk::ConstTensor len = ctx.input(3);
    int64_t frame_length = length;
    if (window.exists()) {
      if (window.rank() != 1)
        sdk::fail_invalid("STFT: window must have rank 1, got shape " + shape_string(window.shape()));
      if (window.dtype() != x.dtype())
        sdk::fail_invalid("STFT: window type " + sdk::dtype_name(window.dtype()) + " differs from signal type " +
                          sdk::dtype_name(x.dtype()));
      frame_length = window.dim(0);
    }
    if (len.exists()) {
      const int64_t fl = signal_scalar_int(len, "STFT", "frame_length");
      if (window.exists() && fl != frame_length)
        sdk::fail_invalid("STFT: window length " + std::to_string(frame_length) + " differs from frame_length " +
                          std::to_string(fl));
      frame_length = fl;
    }
    if (frame_length < 1)
      sdk::fail_invalid("STFT: frame_length must be positive, got " + std::to_string(frame_length));
    if (frame_length > length)
      sdk::fail_invalid("STFT: frame_length " + std::to_string(frame_length) + " exceeds the signal length " +
                        std::to_string(length));
    const int64_t frames = 1 + (length - frame_length) / step;
    const int64_t bins = onesided_ ? frame_length / 2 + 1 : frame_length;

    dispatch<FloatTypes>(x.dtype(), "STFT", [&](auto tag) {
      using T = decltype(tag);
      sdk::Tensor out = ctx.output(0, {batch, frames, bins, 2}, x.dtype());
      if (out.size() == 0) return;
      const T* px = x.data<T>();
      T* py = out.mutable_data<T>();
      std::vector<double> w(static_cast<size_t>(frame_length), 1.0);
      if (window.exists()) {
        const T* pw = window.data<T>();
        for (int64_t j = 0; j < frame_length; ++j) w[static_cast<size_t>(j)] = to_double(pw[j]);
      }
      const FftPlan plan(static_cast<size_t>(frame_length));
      std::vector<Complex> line(static_cast<size_t>(frame_length)), scratch;
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t f = 0; f < frames; ++f) {
          for (int64_t j = 0; j < frame_length; ++j) {
            const T* e = px + (b * length + f * step + j) * c;
            line[static_cast<size_t>(j)] =
                Complex(to_double(e[0]), c == 2 ? to_double(e[1]) : 0.0) * w[static_cast<size_t>(j)];
          }
          transform(plan, line.data(), false, scratch);
          for (int64_t k = 0; k < bins; ++k) {
            T* e = py + ((b * frames + f) * bins + k) * 2;
            e[0] = signal_from_double<T>(line[static_cast<size_t>(k)].real());
            e[1] = signal_from_double<T>(line[static_cast<size_t>(k)].imag());
          }
        }
      }
    });
  }

 private:
  bool onesided_;
};

}  // namespace

void register_signal_kernels(sdk::KernelRegistry& r) {
  r.add_class<DftKernel>("", "DFT", 17, kOpen);  // opset 20 moves axis to an input
  r.add_class<StftKernel>("", "STFT", 17, kOpen);
  register_signal_window_kernels(r);
}

}  // namespace loom::reference
