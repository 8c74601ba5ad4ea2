// Spatial sampling and detection ops: GridSample (PyTorch grid_sample
// semantics; 4-D, and 5-D from opset 20), RoiAlign (ORT / Detectron semantics) and NonMaxSuppression.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/dispatch.h"
#include "common/shape.h"
#include "kernel_families.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

// ---------------------------------------------------------------- GridSample

enum class SampleMode { kBilinear, kNearest, kBicubic };
enum class PadMode { kZeros, kBorder, kReflection };

class GridSample {
 public:
  explicit GridSample(const sdk::Node& n) : align_corners_(n.attr_int("align_corners", 0) != 0) {
    const std::string mode = n.attr_string("mode", "bilinear");
    if (mode == "bilinear" || mode == "linear") mode_ = SampleMode::kBilinear;
    else if (mode == "nearest") mode_ = SampleMode::kNearest;
    else if (mode == "bicubic" || mode == "cubic") mode_ = SampleMode::kBicubic;
    else sdk::fail_invalid("GridSample: unknown mode '" + mode + "'");
    const std::string pad = n.attr_string("padding_mode", "zeros");
    if (pad == "zeros") pad_ = PadMode::kZeros;
    else if (pad == "border") pad_ = PadMode::kBorder;
    else if (pad == "reflection") pad_ = PadMode::kReflection;
    else sdk::fail_invalid("GridSample: unknown padding_mode '" + pad + "'");
  }

  void compute(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0), grid = ctx.required_input(1);
    const Shape xs = x.shape(), gs = grid.shape();
    if (xs.size() == 5) return compute_volumetric(ctx, x, grid);
    if (xs.size() != 4 || gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2)
      sdk::fail_invalid("GridSample: X must be [N,C,H,W] and grid [N,H_out,W_out,2] (or 5-D: [N,C,D,H,W] and "
                        "[N,D_out,H_out,W_out,3]); got " + shape_string(xs) + " and " + shape_string(gs));
    const int64_t n_batch = xs[0], channels = xs[1], h = xs[2], w = xs[3], ho = gs[1], wo = gs[2];
    const Shape ys = {n_batch, channels, ho, wo};
    dispatch<TypeList<float, double, Float16, BFloat16>>(x.dtype(), "GridSample", [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.template data<T>();
      T* py = ctx.output(0, ys, x.dtype()).template mutable_data<T>();
      dispatch<TypeList<float, double, Float16, BFloat16>>(grid.dtype(), "GridSample", [&](auto gtag) {
        using G = decltype(gtag);
        const G* pg = grid.template data<G>();
        for (int64_t n = 0; n < n_batch; ++n)
          for (int64_t i = 0; i < ho * wo; ++i) {
            const double gx = static_cast<double>(pg[(n * ho * wo + i) * 2]);
            const double gy = static_cast<double>(pg[(n * ho * wo + i) * 2 + 1]);
            const double fx = unnormalize(gx, w), fy = unnormalize(gy, h);
            for (int64_t c = 0; c < channels; ++c) {
              const T* plane = px + (n * channels + c) * h * w;
              py[(n * channels + c) * ho * wo + i] = static_cast<T>(static_cast<compute_t<T>>(sample(plane, h, w, fx, fy)));
            }
          }
      });
    });
  }

 private:
  // GridSample-20 on 5-D X [N, C, D, H, W] with grid [N, D_out, H_out,
  // W_out, 3] holding (x, y, z): trilinear or nearest (bicubic is 4-D only).
  void compute_volumetric(KernelContext& ctx, const ConstTensor& x, const ConstTensor& grid) const {
    const Shape xs = x.shape(), gs = grid.shape();
    if (gs.size() != 5 || gs[0] != xs[0] || gs[4] != 3)
      sdk::fail_invalid("GridSample: a 5-D X [N,C,D,H,W] needs grid [N,D_out,H_out,W_out,3]; got " + shape_string(xs) +
                        " and " + shape_string(gs));
    if (mode_ == SampleMode::kBicubic) sdk::fail_invalid("GridSample: bicubic mode takes 4-D input only");
    const int64_t n_batch = xs[0], channels = xs[1], d = xs[2], h = xs[3], w = xs[4];
    const int64_t out_points = sdk::checked_element_count({gs[1], gs[2], gs[3]}, "GridSample: output size");
    const Shape ys = {n_batch, channels, gs[1], gs[2], gs[3]};
    sdk::checked_element_count(ys, "GridSample: output size");
    dispatch<TypeList<float, double, Float16, BFloat16>>(x.dtype(), "GridSample", [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.template data<T>();
      sdk::Tensor out = ctx.output(0, ys, x.dtype());
      if (out.size() == 0) return;
      T* py = out.template mutable_data<T>();
      const std::vector<double> g = grid_values(grid);
      for (int64_t n = 0; n < n_batch; ++n)
        for (int64_t i = 0; i < out_points; ++i) {
          const double* p = g.data() + (n * out_points + i) * 3;
          const double fx = unnormalize(p[0], w), fy = unnormalize(p[1], h), fz = unnormalize(p[2], d);
          for (int64_t c = 0; c < channels; ++c) {
            const T* volume = px + (n * channels + c) * d * h * w;
            py[(n * channels + c) * out_points + i] = static_cast<T>(static_cast<compute_t<T>>(sample3d(volume, d, h, w, fx, fy, fz)));
          }
        }
    });
  }
  static std::vector<double> grid_values(const ConstTensor& grid) {
    std::vector<double> out(static_cast<size_t>(grid.size()));
    dispatch<TypeList<float, double, Float16, BFloat16>>(grid.dtype(), "GridSample", [&](auto tag) {
      using G = decltype(tag);
      const G* pg = grid.template data<G>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(pg[i]);
    });
    return out;
  }
  template <class T>
  static double at3(const T* v, int64_t d, int64_t h, int64_t w, int64_t z, int64_t y, int64_t x) {
    if (z < 0 || z >= d || y < 0 || y >= h || x < 0 || x >= w) return 0;
    return static_cast<double>(v[(z * h + y) * w + x]);
  }
  // Coordinates beyond this are outside any tensor: sampled as padding
  // (zero), and never converted to an integer out of range.
  static bool inside_range(double v) { return std::isfinite(v) && std::fabs(v) < 4.0e18; }
  template <class T>
  double sample3d(const T* v, int64_t d, int64_t h, int64_t w, double fx, double fy, double fz) const {
    if (d <= 0 || h <= 0 || w <= 0) return 0;
    fx = pad_coord(fx, w);
    fy = pad_coord(fy, h);
    fz = pad_coord(fz, d);
    if (!inside_range(fx) || !inside_range(fy) || !inside_range(fz)) return 0;
    if (mode_ == SampleMode::kNearest)
      return at3(v, d, h, w, static_cast<int64_t>(std::nearbyint(fz)), static_cast<int64_t>(std::nearbyint(fy)),
                 static_cast<int64_t>(std::nearbyint(fx)));
    const double x0 = std::floor(fx), y0 = std::floor(fy), z0 = std::floor(fz);
    const double lx = fx - x0, ly = fy - y0, lz = fz - z0;
    const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0), iz = static_cast<int64_t>(z0);
    double out = 0;
    for (int dz = 0; dz < 2; ++dz)
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx)
          out += (dz ? lz : 1 - lz) * (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx) * at3(v, d, h, w, iz + dz, iy + dy, ix + dx);
    return out;
  }

  double unnormalize(double coord, int64_t size) const {
    return align_corners_ ? (coord + 1) / 2 * static_cast<double>(size - 1)
                          : ((coord + 1) * static_cast<double>(size) - 1) / 2;
  }
  static double reflect(double v, double twice_low, double twice_high) {
    if (twice_low == twice_high) return 0;
    const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
    v = std::fabs(v - lo);
    const double extra = std::fmod(v, span);
    const int64_t flips = static_cast<int64_t>(std::floor(v / span));
    return flips % 2 == 0 ? extra + lo : span - extra + lo;
  }
  // Applies border / reflection padding to a source coordinate.
  double pad_coord(double v, int64_t size) const {
    if (pad_ == PadMode::kBorder) return std::clamp(v, 0.0, static_cast<double>(size - 1));
    if (pad_ == PadMode::kReflection) {
      v = align_corners_ ? reflect(v, 0, 2.0 * static_cast<double>(size - 1))
                         : reflect(v, -1, 2.0 * static_cast<double>(size) - 1);
      return std::clamp(v, 0.0, static_cast<double>(size - 1));
    }
    return v;
  }
  template <class T>
  static double at(const T* plane, int64_t h, int64_t w, int64_t y, int64_t x) {
    if (y < 0 || y >= h || x < 0 || x >= w) return 0;
    return static_cast<double>(plane[y * w + x]);
  }
  // Tap for bicubic: padding applies per tap.
  template <class T>
  double tap(const T* plane, int64_t h, int64_t w, int64_t y, int64_t x) const {
    if (pad_ == PadMode::kZeros) return at(plane, h, w, y, x);
    const int64_t yy = static_cast<int64_t>(pad_coord(static_cast<double>(y), h));
    const int64_t xx = static_cast<int64_t>(pad_coord(static_cast<double>(x), w));
    return at(plane, h, w, yy, xx);
  }
  static void cubic_weights(double t, double wts[4]) {
    const double a = -0.75;
    auto near = [&](double v) { return ((a + 2) * v - (a + 3)) * v * v + 1; };
    auto far = [&](double v) { return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a; };
    wts[0] = far(t + 1);
    wts[1] = near(t);
    wts[2] = near(1 - t);
    wts[3] = far(2 - t);
  }
  template <class T>
  double sample(const T* plane, int64_t h, int64_t w, double fx, double fy) const {
    if (h <= 0 || w <= 0) return 0;
    if (mode_ == SampleMode::kBicubic) {
      const double x0 = std::floor(fx), y0 = std::floor(fy);
      double wx[4], wy[4];
      cubic_weights(fx - x0, wx);
      cubic_weights(fy - y0, wy);
      double out = 0;
      for (int i = 0; i < 4; ++i) {
        double row = 0;
        for (int j = 0; j < 4; ++j)
          row += wx[j] * tap(plane, h, w, static_cast<int64_t>(y0) - 1 + i, static_cast<int64_t>(x0) - 1 + j);
        out += wy[i] * row;
      }
      return out;
    }
    fx = pad_coord(fx, w);
    fy = pad_coord(fy, h);
    if (mode_ == SampleMode::kNearest) {
      const double rx = std::nearbyint(fx), ry = std::nearbyint(fy);
      if (!(rx >= 0 && rx < static_cast<double>(w) && ry >= 0 && ry < static_cast<double>(h))) return 0;
      return at(plane, h, w, static_cast<int64_t>(ry), static_cast<int64_t>(rx));
    }
    if (!std::isfinite(fx) || !std::isfinite(fy)) return 0;
    const double x0 = std::floor(fx), y0 = std::floor(fy);
    const double lx = fx - x0, ly = fy - y0;
    const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
    return (1 - ly) * ((1 - lx) * at(plane, h, w, iy, ix) + lx * at(plane, h, w, iy, ix + 1)) +
           ly * ((1 - lx) * at(plane, h, w, iy + 1, ix) + lx * at(plane, h, w, iy + 1, ix + 1));
  }

  bool align_corners_;
  SampleMode mode_ = SampleMode::kBilinear;
  PadMode pad_ = PadMode::kZeros;
};

// ------------------------------------------------------------------ RoiAlign

class RoiAlign {
 public:
  explicit RoiAlign(const sdk::Node& n)
      : max_mode_(n.attr_string("mode", "avg") == "max"),
        out_h_(n.attr_int("output_height", 1)),
        out_w_(n.attr_int("output_width", 1)),
        sampling_ratio_(n.attr_int("sampling_ratio", 0)),
        spatial_scale_(n.attr_float("spatial_scale", 1.0f)) {
    const std::string mode = n.attr_string("mode", "avg");
    if (mode != "avg" && mode != "max") sdk::fail_invalid("RoiAlign: unknown mode '" + mode + "'");
    // Opset 10 behaves as output_half_pixel; opset 16 defaults to half_pixel.
    const std::string ctm = n.attr_string("coordinate_transformation_mode", n.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      sdk::fail_invalid("RoiAlign: unknown coordinate_transformation_mode '" + ctm + "'");
    half_pixel_ = ctm == "half_pixel";
    if (out_h_ <= 0 || out_w_ <= 0 || sampling_ratio_ < 0)
      sdk::fail_invalid("RoiAlign: output sizes must be positive and sampling_ratio non-negative");
  }

  void compute(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0), rois = ctx.required_input(1), bidx = ctx.required_input(2);
    const Shape xs = x.shape(), rs = rois.shape();
    if (xs.size() != 4) sdk::fail_invalid("RoiAlign: X must be 4-D, got " + shape_string(xs));
    if (rs.size() != 2 || rs[1] != 4) sdk::fail_invalid("RoiAlign: rois must be [num_rois, 4], got " + shape_string(rs));
    if (bidx.rank() != 1 || bidx.size() != rs[0])
      sdk::fail_invalid("RoiAlign: batch_indices must be 1-D with num_rois elements");
    const int64_t num_rois = rs[0], channels = xs[1], h = xs[2], w = xs[3];
    const std::vector<int64_t> batch = bidx.to_int64_vector();
    const Shape ys = {num_rois, channels, out_h_, out_w_};
    dispatch<TypeList<float, double, Float16, BFloat16>>(x.dtype(), "RoiAlign", [&](auto tag) {
      using T = decltype(tag);
      if (rois.dtype() != x.dtype()) sdk::fail_invalid("RoiAlign: rois type differs from X");
      const T* px = x.template data<T>();
      const T* pr = rois.template data<T>();
      T* py = ctx.output(0, ys, x.dtype()).template mutable_data<T>();
      for (int64_t r = 0; r < num_rois; ++r) {
        if (batch[r] < 0 || batch[r] >= xs[0])
          sdk::fail_invalid("RoiAlign: batch index " + std::to_string(batch[r]) + " out of range for batch " +
                            std::to_string(xs[0]));
        const double off = half_pixel_ ? 0.5 : 0.0, scale = spatial_scale_;
        const double x1 = static_cast<double>(pr[r * 4 + 0]) * scale - off;
        const double y1 = static_cast<double>(pr[r * 4 + 1]) * scale - off;
        const double x2 = static_cast<double>(pr[r * 4 + 2]) * scale - off;
        const double y2 = static_cast<double>(pr[r * 4 + 3]) * scale - off;
        double rw = x2 - x1, rh = y2 - y1;
        if (!half_pixel_) {
          rw = std::max(rw, 1.0);
          rh = std::max(rh, 1.0);
        }
        const double bin_h = rh / static_cast<double>(out_h_), bin_w = rw / static_cast<double>(out_w_);
        const int64_t grid_h = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rh / static_cast<double>(out_h_)));
        const int64_t grid_w = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rw / static_cast<double>(out_w_)));
        const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = px + (batch[r] * channels + c) * h * w;
          for (int64_t ph = 0; ph < out_h_; ++ph)
            for (int64_t pw = 0; pw < out_w_; ++pw) {
              double acc = 0;
              bool first = true;
              for (int64_t iy = 0; iy < grid_h; ++iy) {
                const double yy = y1 + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(grid_h);
                for (int64_t ix = 0; ix < grid_w; ++ix) {
                  const double xx = x1 + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(grid_w);
                  const double v = bilinear(plane, h, w, yy, xx);
                  if (max_mode_) {
                    acc = first ? v : std::max(acc, v);
                    first = false;
                  } else {
                    acc += v;
                  }
                }
              }
              if (!max_mode_) acc /= count;
              py[((r * channels + c) * out_h_ + ph) * out_w_ + pw] = static_cast<T>(static_cast<compute_t<T>>(acc));
            }
        }
      }
    });
  }

 private:
  // Detectron's interpolation; in max mode ORT takes the max of the four
  // weighted corners rather than their sum, which is reproduced here.
  template <class T>
  double bilinear(const T* plane, int64_t h, int64_t w, double y, double x) const {
    if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return 0;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y_lo = static_cast<int64_t>(y), x_lo = static_cast<int64_t>(x), y_hi, x_hi;
    if (y_lo >= h - 1) {
      y_hi = y_lo = h - 1;
      y = static_cast<double>(y_lo);
    } else {
      y_hi = y_lo + 1;
    }
    if (x_lo >= w - 1) {
      x_hi = x_lo = w - 1;
      x = static_cast<double>(x_lo);
    } else {
      x_hi = x_lo + 1;
    }
    const double ly = y - static_cast<double>(y_lo), lx = x - static_cast<double>(x_lo), hy = 1 - ly, hx = 1 - lx;
    const double v1 = hy * hx * static_cast<double>(plane[y_lo * w + x_lo]);
    const double v2 = hy * lx * static_cast<double>(plane[y_lo * w + x_hi]);
    const double v3 = ly * hx * static_cast<double>(plane[y_hi * w + x_lo]);
    const double v4 = ly * lx * static_cast<double>(plane[y_hi * w + x_hi]);
    if (max_mode_) return std::max(std::max(v1, v2), std::max(v3, v4));
    return v1 + v2 + v3 + v4;
  }

  bool max_mode_;
  int64_t out_h_, out_w_, sampling_ratio_;
  float spatial_scale_;
  bool half_pixel_ = false;
};

// --------------------------------------------------------- NonMaxSuppression

struct Box {
  float y1, x1, y2, x2;
};

Box read_box(const float* p, bool center) {
  if (center) {
    const float xc = p[0], yc = p[1], w = p[2], h = p[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}

// True when IoU(a, b) exceeds the threshold.
bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return false;
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return false;
  const float inter = ih * iw;
  return inter / (area_a + area_b - inter) > iou_threshold;
}

void non_max_suppression(KernelContext& ctx) {
  const std::string op = "NonMaxSuppression";
  const ConstTensor boxes = ctx.required_input(0), scores = ctx.required_input(1);
  const ConstTensor max_t = ctx.input(2), iou_t = ctx.input(3), score_t = ctx.input(4);
  const Shape bs = boxes.shape(), ss = scores.shape();
  if (bs.size() != 3 || bs[2] != 4) sdk::fail_invalid(op + ": boxes must be [batch, boxes, 4], got " + shape_string(bs));
  if (ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    sdk::fail_invalid(op + ": scores " + shape_string(ss) + " do not match boxes " + shape_string(bs));
  if (boxes.dtype() != LOOM_DTYPE_FLOAT || scores.dtype() != LOOM_DTYPE_FLOAT)
    unsupported_type(op, boxes.dtype() != LOOM_DTYPE_FLOAT ? boxes.dtype() : scores.dtype());
  const bool center = ctx.node().attr_int("center_point_box", 0) != 0;
  int64_t max_out = 0;
  if (max_t.exists() && max_t.size() > 0) max_out = max_t.to_int64_vector()[0];
  float iou_threshold = 0, score_threshold = 0;
  bool use_score = false;
  if (iou_t.exists() && iou_t.size() > 0) iou_threshold = iou_t.data<float>()[0];
  if (score_t.exists() && score_t.size() > 0) {
    score_threshold = score_t.data<float>()[0];
    use_score = true;
  }
  if (iou_threshold < 0 || iou_threshold > 1) sdk::fail_invalid(op + ": iou_threshold must be in [0, 1]");
  const int64_t n_batch = bs[0], n_boxes = bs[1], n_classes = ss[1];
  const float* pb = boxes.data<float>();
  const float* ps = scores.data<float>();
  std::vector<int64_t> selected;  // triples
  if (max_out > 0) {
    std::vector<Box> bx(static_cast<size_t>(n_boxes));
    std::vector<int64_t> order, kept;
    int64_t compared = 0;
    for (int64_t b = 0; b < n_batch; ++b) {
      for (int64_t i = 0; i < n_boxes; ++i) bx[i] = read_box(pb + (b * n_boxes + i) * 4, center);
      for (int64_t c = 0; c < n_classes; ++c) {
        const float* sc = ps + (b * n_classes + c) * n_boxes;
        order.clear();
        for (int64_t i = 0; i < n_boxes; ++i)
          if (!use_score || sc[i] > score_threshold) order.push_back(i);
        // Highest score first; equal scores keep the lower index first.
        std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return sc[l] > sc[r]; });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          // Quadratic in the boxes kept: stop between boxes once the run is
          // cancelled or timed out.
          compared += static_cast<int64_t>(kept.size());
          if (compared > (int64_t{1} << 24)) {
            ctx.stop_if_asked();
            compared = 0;
          }
          bool keep = true;
          for (int64_t k : kept)
            if (suppresses(bx[k], bx[i], iou_threshold)) {
              keep = false;
              break;
            }
          if (!keep) continue;
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
  }
  const int64_t count = static_cast<int64_t>(selected.size() / 3);
  sdk::Tensor out = ctx.output(0, {count, 3}, LOOM_DTYPE_INT64);
  if (count > 0) std::copy(selected.begin(), selected.end(), out.mutable_data<int64_t>());
}

}  // namespace

void register_nn_spatial_kernels(sdk::KernelRegistry& r) {
  r.add_class<GridSample>("", "GridSample", 16, LOOM_OPSET_OPEN_END);
  r.add_class<RoiAlign>("", "RoiAlign", 10, LOOM_OPSET_OPEN_END);
  r.add("", "NonMaxSuppression", 10, LOOM_OPSET_OPEN_END, non_max_suppression);
}

}  // namespace loom::reference
