// Tensor family, resampling: Resize (opsets 10, 11, 13, and the opset-18
// attributes antialias / axes / keep_aspect_ratio_policy when present) and
// Upsample (7, 9).
//
// Resampling is separable: for every axis and every output coordinate we
// precompute the input taps (index, weight); an output element is the sum
// over the cartesian product of its per-axis taps. Coordinates follow the
// ONNX reference implementation (onnx/backend/test/case/node/resize.py),
// including its use of scale * input_length as the "resized length".
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/dispatch.h"
#include "common/tensor_copy.h"
#include "common/tensor_kernels.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

constexpr int kOpen = LOOM_OPSET_OPEN_END;

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric,
                   kTfHalfPixelForNn, kTfCropAndResize };
// kSimple is the pre-opset-11 behaviour (as in onnxruntime): ceil when
// downsampling, floor otherwise.
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

// Taps of one axis: for output coordinate x, taps [begin[x], begin[x+1]) of
// index/weight; `outside[x]` marks tf_crop_and_resize extrapolation.
struct AxisTaps {
  std::vector<int64_t> begin;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> outside;
};

class ResizeKernel {
 public:
  explicit ResizeKernel(const sdk::Node& node) {
    const std::string op(node.op_type());
    upsample_ = op == "Upsample";
    opset_ = node.opset();
    legacy_ = upsample_ || opset_ < 11;
    const std::string mode = node.attr_string("mode", "nearest");
    if (mode == "nearest") {
      mode_ = Mode::kNearest;
    } else if (mode == "linear" || mode == "bilinear") {
      mode_ = Mode::kLinear;
    } else if (mode == "cubic" && !legacy_) {
      mode_ = Mode::kCubic;
    } else {
      sdk::fail_invalid(op + ": unsupported mode '" + mode + "'");
    }
    if (legacy_) {
      coord_ = Coord::kAsymmetric;
      nearest_ = Nearest::kSimple;
    } else {
      const std::string c = node.attr_string("coordinate_transformation_mode", "half_pixel");
      if (c == "half_pixel") coord_ = Coord::kHalfPixel;
      else if (c == "half_pixel_symmetric") coord_ = Coord::kHalfPixelSymmetric;
      else if (c == "pytorch_half_pixel") coord_ = Coord::kPytorchHalfPixel;
      else if (c == "align_corners") coord_ = Coord::kAlignCorners;
      else if (c == "asymmetric") coord_ = Coord::kAsymmetric;
      else if (c == "tf_half_pixel_for_nn") coord_ = Coord::kTfHalfPixelForNn;
      else if (c == "tf_crop_and_resize") coord_ = Coord::kTfCropAndResize;
      else sdk::fail_invalid("Resize: unknown coordinate_transformation_mode '" + c + "'");
      const std::string n = node.attr_string("nearest_mode", "round_prefer_floor");
      if (n == "round_prefer_floor") nearest_ = Nearest::kRoundPreferFloor;
      else if (n == "round_prefer_ceil") nearest_ = Nearest::kRoundPreferCeil;
      else if (n == "floor") nearest_ = Nearest::kFloor;
      else if (n == "ceil") nearest_ = Nearest::kCeil;
      else sdk::fail_invalid("Resize: unknown nearest_mode '" + n + "'");
      const std::string k = node.attr_string("keep_aspect_ratio_policy", "stretch");
      if (k == "stretch") policy_ = AspectPolicy::kStretch;
      else if (k == "not_larger") policy_ = AspectPolicy::kNotLarger;
      else if (k == "not_smaller") policy_ = AspectPolicy::kNotSmaller;
      else sdk::fail_invalid("Resize: unknown keep_aspect_ratio_policy '" + k + "'");
    }
    cubic_a_ = node.attr_float("cubic_coeff_a", -0.75f);
    exclude_outside_ = node.attr_int("exclude_outside", 0) != 0;
    extrapolation_ = node.attr_float("extrapolation_value", 0.0f);
    antialias_ = node.attr_int("antialias", 0) != 0;
    axes_attr_ = node.attr_ints("axes");
    if (upsample_ && opset_ < 9) scales_attr_ = node.attr_floats("scales");
  }

  void compute(KernelContext& ctx) const {
    const std::string_view op = upsample_ ? "Upsample" : "Resize";
    const sdk::ConstTensor x = ctx.required_input(0);
    const Shape in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());

    // Which axes are resized, in the order scales/sizes/roi list them.
    std::vector<int64_t> axes;
    if (axes_attr_.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    } else {
      for (int64_t a : axes_attr_) axes.push_back(normalize_axis(a, rank, op));
    }
    const size_t na = axes.size();

    // Inputs: Upsample-7 (X; scales attr), Upsample-9 / Resize-10 (X, scales),
    // Resize-11+ (X, roi, scales, sizes).
    std::vector<double> scales_in, roi;
    std::vector<int64_t> sizes_in;
    if (upsample_ && opset_ < 9) {
      scales_in.assign(scales_attr_.begin(), scales_attr_.end());
    } else if (legacy_) {
      scales_in = read_floats(ctx.required_input(1), op);
    } else {
      if (const sdk::ConstTensor t = ctx.input(1); t.exists() && t.size() > 0) roi = read_floats(t, op);
      if (const sdk::ConstTensor t = ctx.input(2); t.exists() && t.size() > 0) scales_in = read_floats(t, op);
      if (const sdk::ConstTensor t = ctx.input(3); t.exists() && t.size() > 0) sizes_in = read_indices(t, op, "sizes");
    }
    if (!scales_in.empty() && !sizes_in.empty())
      sdk::fail_invalid(std::string(op) + ": only one of scales and sizes may be given");
    if (scales_in.empty() && sizes_in.empty())
      sdk::fail_invalid(std::string(op) + ": one of scales and sizes must be given");

    std::vector<double> scale(rank, 1.0);
    Shape out_shape = in;
    if (!scales_in.empty()) {
      if (scales_in.size() != na)
        sdk::fail_invalid(std::string(op) + ": scales has " + std::to_string(scales_in.size()) +
                          " entries, expected " + std::to_string(na));
      for (size_t i = 0; i < na; ++i) {
        const double len = std::floor(scales_in[i] * static_cast<double>(in[axes[i]]));
        if (!(scales_in[i] > 0) || !(len < 9.0e15))
          sdk::fail_invalid(std::string(op) + ": scales must be positive and finite");
        scale[axes[i]] = scales_in[i];
        out_shape[axes[i]] = static_cast<int64_t>(len);
      }
    } else {
      if (sizes_in.size() != na)
        sdk::fail_invalid(std::string(op) + ": sizes has " + std::to_string(sizes_in.size()) +
                          " entries, expected " + std::to_string(na));
      for (int64_t s : sizes_in)
        if (s < 0) sdk::fail_invalid(std::string(op) + ": negative size");
      if (policy_ == AspectPolicy::kStretch) {
        for (size_t i = 0; i < na; ++i) {
          const int64_t ax = axes[i];
          out_shape[ax] = sizes_in[i];
          scale[ax] = in[ax] == 0 ? 1.0 : static_cast<double>(sizes_in[i]) / static_cast<double>(in[ax]);
        }
      } else {
        double s = policy_ == AspectPolicy::kNotLarger ? 1e300 : 0.0;
        for (size_t i = 0; i < na; ++i) {
          const double r = static_cast<double>(sizes_in[i]) / static_cast<double>(in[axes[i]]);
          s = policy_ == AspectPolicy::kNotLarger ? std::min(s, r) : std::max(s, r);
        }
        if (!(s > 0) || !(s < 1e15)) sdk::fail_invalid(std::string(op) + ": invalid sizes for keep_aspect_ratio_policy");
        for (size_t i = 0; i < na; ++i) {
          scale[axes[i]] = s;
          out_shape[axes[i]] = static_cast<int64_t>(std::floor(s * static_cast<double>(in[axes[i]]) + 0.5));
        }
      }
    }

    // roi lists [starts..., ends...] over the resized axes.
    std::vector<double> roi_start(rank, 0.0), roi_end(rank, 1.0);
    if (coord_ == Coord::kTfCropAndResize) {
      if (roi.size() != 2 * na)
        sdk::fail_invalid(std::string(op) + ": roi has " + std::to_string(roi.size()) + " entries, expected " +
                          std::to_string(2 * na));
      for (size_t i = 0; i < na; ++i) {
        roi_start[axes[i]] = roi[i];
        roi_end[axes[i]] = roi[i + na];
      }
    }

    for (int64_t d = 0; d < rank; ++d)
      if (in[d] == 0 && out_shape[d] > 0)
        sdk::fail_invalid(std::string(op) + ": cannot resize an empty dimension");
    // The output first: the host refuses sizes it cannot (or may not)
    // allocate before the taps, sized by the output, are built.
    const sdk::Tensor y = ctx.output(0, out_shape, x.dtype());
    if (y.size() == 0) return;
    std::vector<AxisTaps> taps(rank);
    for (int64_t d = 0; d < rank; ++d) taps[d] = axis_taps(in[d], out_shape[d], scale[d], roi_start[d], roi_end[d]);

    if (mode_ == Mode::kNearest && coord_ != Coord::kTfCropAndResize) {
      const ElementCopier c(x, y, op);
      const Shape st = strides_of(in);
      for_each_index(out_shape, [&](int64_t o, const Shape& idx) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) off += taps[d].index[taps[d].begin[idx[d]]] * st[d];
        c.copy(o, off);
      });
      return;
    }
    dispatch<NumericTypes>(x.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      interpolate<T>(x, y, in, out_shape, taps);
    });
  }

 private:
  static std::vector<double> read_floats(const sdk::ConstTensor& t, std::string_view op) {
    std::vector<double> v(static_cast<size_t>(t.size()));
    dispatch<FloatTypes>(t.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* p = t.data<T>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
    });
    return v;
  }

  // Maps an output coordinate to the input coordinate system.
  double original_coord(int64_t x, int64_t in, int64_t out, double s, double r0, double r1) const {
    const double len = s * static_cast<double>(in);  // "resized length", as the ONNX reference has it
    const double xr = static_cast<double>(x);
    switch (coord_) {
      case Coord::kHalfPixel: return (xr + 0.5) / s - 0.5;
      case Coord::kHalfPixelSymmetric: {
        const double adjustment = static_cast<double>(out) / len;
        const double center = static_cast<double>(in) / 2.0;
        return center * (1.0 - adjustment) + (xr + 0.5) / s - 0.5;
      }
      case Coord::kPytorchHalfPixel: return out > 1 ? (xr + 0.5) / s - 0.5 : 0.0;
      case Coord::kAlignCorners: return len == 1.0 ? 0.0 : xr * static_cast<double>(in - 1) / (len - 1.0);
      case Coord::kAsymmetric: return xr / s;
      case Coord::kTfHalfPixelForNn: return (xr + 0.5) / s;
      case Coord::kTfCropAndResize:
        return out > 1 ? r0 * static_cast<double>(in - 1) + xr * (r1 - r0) * static_cast<double>(in - 1) /
                                                              static_cast<double>(out - 1)
                       : 0.5 * (r0 + r1) * static_cast<double>(in - 1);
    }
    return 0.0;
  }

  int64_t nearest_index(double xo, double s) const {
    const double fl = std::floor(xo);
    const double frac = xo - fl;
    switch (nearest_) {
      case Nearest::kRoundPreferFloor: return static_cast<int64_t>(frac <= 0.5 ? fl : fl + 1);
      case Nearest::kRoundPreferCeil: return static_cast<int64_t>(frac < 0.5 ? fl : fl + 1);
      case Nearest::kFloor: return static_cast<int64_t>(fl);
      case Nearest::kCeil: return static_cast<int64_t>(std::ceil(xo));
      case Nearest::kSimple: return static_cast<int64_t>(s < 1.0 ? std::ceil(xo) : std::trunc(xo));
    }
    return 0;
  }

  double cubic_weight(double d) const {  // Keys kernel at distance d
    const double a = cubic_a_;
    d = std::abs(d);
    if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
    if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
    return 0.0;
  }

  AxisTaps axis_taps(int64_t in, int64_t out, double s, double r0, double r1) const {
    AxisTaps t;
    t.begin.reserve(out + 1);
    t.outside.assign(out, false);
    std::vector<int64_t> idx;
    std::vector<double> w;
    for (int64_t x = 0; x < out; ++x) {
      t.begin.push_back(static_cast<int64_t>(t.index.size()));
      const double xo = original_coord(x, in, out, s, r0, r1);
      if (coord_ == Coord::kTfCropAndResize && (xo < 0.0 || xo > static_cast<double>(in - 1))) {
        t.outside[x] = true;
        t.index.push_back(0);
        t.weight.push_back(0.0);
        continue;
      }
      idx.clear();
      w.clear();
      const double fl = std::floor(xo);
      const double frac = xo - fl;
      const int64_t base = static_cast<int64_t>(fl);
      if (mode_ == Mode::kNearest) {
        idx.push_back(nearest_index(xo, s));
        w.push_back(1.0);
      } else if (antialias_ && s < 1.0) {
        // Widen the filter by 1/scale and renormalise (opset 18 antialias).
        const double support = (mode_ == Mode::kLinear ? 1.0 : 2.0) / s;
        for (int64_t j = static_cast<int64_t>(std::floor(xo - support)) + 1;
             static_cast<double>(j) < xo + support; ++j) {
          const double dist = (static_cast<double>(j) - xo) * s;
          idx.push_back(j);
          w.push_back(mode_ == Mode::kLinear ? std::max(0.0, 1.0 - std::abs(dist)) : cubic_weight(dist));
        }
      } else if (mode_ == Mode::kLinear) {
        idx = {base, base + 1};
        w = {1.0 - frac, frac};
      } else {
        idx = {base - 1, base, base + 1, base + 2};
        w = {cubic_weight(1.0 + frac), cubic_weight(frac), cubic_weight(1.0 - frac), cubic_weight(2.0 - frac)};
      }
      if (exclude_outside_ && mode_ != Mode::kNearest) {
        for (size_t k = 0; k < idx.size(); ++k)
          if (idx[k] < 0 || idx[k] >= in) w[k] = 0.0;
      }
      if (mode_ != Mode::kNearest && (exclude_outside_ || antialias_)) {
        double sum = 0.0;
        for (double v : w) sum += v;
        if (sum != 0.0)
          for (double& v : w) v /= sum;
      }
      for (size_t k = 0; k < idx.size(); ++k) {
        if (w[k] == 0.0 && idx.size() > 1) continue;
        t.index.push_back(std::clamp<int64_t>(idx[k], 0, in - 1));
        t.weight.push_back(w[k]);
      }
      if (t.index.size() == static_cast<size_t>(t.begin.back())) {  // every weight was zero
        t.index.push_back(std::clamp<int64_t>(base, 0, in - 1));
        t.weight.push_back(0.0);
      }
    }
    t.begin.push_back(static_cast<int64_t>(t.index.size()));
    return t;
  }

  template <class T>
  void interpolate(const sdk::ConstTensor& x, const sdk::Tensor& y, const Shape& in, const Shape& out_shape,
                   const std::vector<AxisTaps>& taps) const {
    using C = compute_t<T>;
    const T* px = x.data<T>();
    T* py = y.mutable_data<T>();
    const int64_t rank = static_cast<int64_t>(in.size());
    const Shape st = strides_of(in);
    Shape tap(rank), lo(rank), hi(rank);
    for_each_index(out_shape, [&](int64_t o, const Shape& idx) {
      for (int64_t d = 0; d < rank; ++d) {
        if (taps[d].outside[idx[d]]) {
          py[o] = static_cast<T>(static_cast<C>(extrapolation_));
          return;
        }
        lo[d] = tap[d] = taps[d].begin[idx[d]];
        hi[d] = taps[d].begin[idx[d] + 1];
      }
      double acc = 0.0;
      while (true) {
        double w = 1.0;
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) {
          w *= taps[d].weight[tap[d]];
          off += taps[d].index[tap[d]] * st[d];
        }
        acc += w * static_cast<double>(static_cast<C>(px[off]));
        int64_t d = rank - 1;
        for (; d >= 0; --d) {
          if (++tap[d] < hi[d]) break;
          tap[d] = lo[d];
        }
        if (d < 0) break;
      }
      if constexpr (is_float_v<T>) {
        py[o] = static_cast<T>(static_cast<C>(acc));
      } else {
        const double lo_v = static_cast<double>(std::numeric_limits<T>::lowest());
        const double hi_v = static_cast<double>(std::numeric_limits<T>::max());
        py[o] = static_cast<T>(std::clamp(std::round(acc), lo_v, hi_v));
      }
    });
  }

  bool upsample_ = false;
  bool legacy_ = false;
  int64_t opset_ = 0;
  Mode mode_ = Mode::kNearest;
  Coord coord_ = Coord::kHalfPixel;
  Nearest nearest_ = Nearest::kRoundPreferFloor;
  AspectPolicy policy_ = AspectPolicy::kStretch;
  float cubic_a_ = -0.75f;
  bool exclude_outside_ = false;
  float extrapolation_ = 0.0f;
  bool antialias_ = false;
  std::vector<int64_t> axes_attr_;
  std::vector<float> scales_attr_;
};

}  // namespace

void register_tensor_resize_kernels(sdk::KernelRegistry& r) {
  r.add_class<ResizeKernel>("", "Resize", 10, kOpen);
  r.add_class<ResizeKernel>("", "Upsample", 7, kOpen);
}

}  // namespace loom::reference
