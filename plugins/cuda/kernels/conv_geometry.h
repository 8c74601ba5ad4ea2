// Host-side geometry of the sliding-window ops (Conv, ConvTranspose and the
// pools) beyond what loom/sdk/window.h resolves (output sizes and pads, as
// the ONNX spec and the other EPs compute them): how a problem maps onto
// cuDNN's symmetric-padding convolutions (pre-pad or crop with our own
// kernel), the pooling kernels' geometry, and the key under which a
// convolution's chosen algorithm is cached. Plain C++ (the header-only SDK,
// no CUDA) so the unit tests run it on the CPU. The SDK's resolution throws
// sdk::Error; the helpers here throw std::invalid_argument (bad attributes
// or shapes) or std::out_of_range (valid, but past what cuDNN takes).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/conv_index.h"
#include "loom/sdk/window.h"

namespace loom::cuda {

using Dims = std::vector<int64_t>;

using sdk::AutoPad;
using sdk::TransposeAttrs;
using sdk::TransposeWindow;
using sdk::Window;
using sdk::WindowAttrs;

namespace geometry_detail {

inline int64_t mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::invalid_argument("window size arithmetic overflows");
  return r;
}
inline int64_t add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw std::invalid_argument("window size arithmetic overflows");
  return r;
}
// Extent of a dilated kernel: (k - 1) * dilation + 1.
inline int64_t extent(int64_t k, int64_t dilation) { return add(mul(k - 1, dilation), 1); }

}  // namespace geometry_detail

// A forward convolution as cuDNN runs it: cuDNN pads both ends alike, so
// each dim's pads are split into a symmetric part cuDNN applies (`pads`)
// and what is left, added beforehand by copying X into a zero-padded
// buffer (`pre_begin`, `pre_end`; `padded_in` its spatial dims). A
// symmetric part as large as the dilated kernel goes to the pre-pad too.
struct ForwardPlan {
  Dims pads, pre_begin, pre_end, padded_in;
  bool prepad = false;
};

inline ForwardPlan plan_conv_forward(const Window& g) {
  ForwardPlan p;
  for (size_t d = 0; d < g.rank(); ++d) {
    int64_t sym = std::min(g.pad_begin[d], g.pad_end[d]);
    if (sym >= geometry_detail::extent(g.kernel[d], g.dilations[d])) sym = 0;
    p.pads.push_back(sym);
    p.pre_begin.push_back(g.pad_begin[d] - sym);
    p.pre_end.push_back(g.pad_end[d] - sym);
    p.padded_in.push_back(g.in[d] + p.pre_begin.back() + p.pre_end.back());
    if (p.pre_begin.back() != 0 || p.pre_end.back() != 0) p.prepad = true;
  }
  return p;
}

// ConvTranspose as cuDNN's backward-data convolution. Direct when every
// dim's pads are equal, non-negative and smaller than the dilated kernel,
// and output_padding is in [0, stride): cuDNN writes Y itself. Otherwise
// cuDNN writes the unpadded result without output padding (`full`:
// stride * (in - 1) + dilated kernel, every position any input reaches)
// into a buffer, and Y[o] = full[o + pad_begin] (zero outside) is copied
// out of it (`crop_begin` = -pad_begin, a WindowCopy offset).
struct TransposePlan {
  bool direct = true;
  Dims pads, full, crop_begin;
};

inline TransposePlan plan_conv_transpose(const TransposeWindow& g) {
  TransposePlan p;
  for (size_t d = 0; d < g.rank(); ++d) {
    const int64_t eff = geometry_detail::extent(g.kernel[d], g.dilations[d]);
    const bool ok = g.pad_begin[d] == g.pad_end[d] && g.pad_begin[d] >= 0 && g.pad_begin[d] < eff &&
                    g.output_padding[d] >= 0 && g.output_padding[d] < g.strides[d];
    if (!ok) p.direct = false;
  }
  for (size_t d = 0; d < g.rank(); ++d) {
    if (p.direct) {
      p.pads.push_back(g.pad_begin[d]);
      p.full.push_back(g.out[d]);
      p.crop_begin.push_back(0);
    } else {
      const int64_t eff = geometry_detail::extent(g.kernel[d], g.dilations[d]);
      p.pads.push_back(0);
      p.full.push_back(geometry_detail::add(geometry_detail::mul(g.strides[d], g.in[d] - 1), eff));
      p.crop_begin.push_back(-g.pad_begin[d]);
    }
  }
  return p;
}

// The WindowCopy from a tensor of dims `in` to one of dims `out` (equal
// rank, at most kMaxRank) with y[o] = x[o - begin].
inline WindowCopy make_window_copy(const Dims& out, const Dims& in, const Dims& begin) {
  if (out.size() != in.size() || begin.size() != in.size() || in.size() > static_cast<size_t>(kMaxRank))
    throw std::invalid_argument("window copy ranks disagree or exceed the maximum");
  WindowCopy c;
  c.rank = static_cast<int>(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    c.out_dims[d] = out[d];
    c.in_dims[d] = in[d];
    c.begin[d] = begin[d];
  }
  return c;
}

// A pooling window of 1 to kPoolDims spatial dims over `planes` (N * C)
// planes, lifted to kPoolDims dims.
inline PoolGeometry make_pool_geometry(const Window& g, int64_t planes) {
  const size_t r = g.rank();
  if (r < 1 || r > static_cast<size_t>(kPoolDims))
    throw std::out_of_range("pooling over " + std::to_string(r) + " spatial dims (1 to 3 are supported)");
  PoolGeometry p;
  p.planes = planes;
  const size_t lead = static_cast<size_t>(kPoolDims) - r;
  for (size_t d = 0; d < r; ++d) {
    p.in[lead + d] = g.in[d];
    p.out[lead + d] = g.out[d];
    p.kernel[lead + d] = g.kernel[d];
    p.strides[lead + d] = g.strides[d];
    p.dilations[lead + d] = g.dilations[d];
    p.pad_begin[lead + d] = g.pad_begin[d];
    p.pad_end[lead + d] = g.pad_end[d];
  }
  return p;
}

// One cuDNN convolution in the forward convolution's terms: x [N, C, ...]
// convolved with w [K, C / groups, ...] gives y [N, K, ...]. Conv runs it
// forward (x in, y out); ConvTranspose runs its backward data (y = the
// transposed conv's input in, x = its output out). 1-D problems are lifted
// to 2-D (H = 1), so nb_dims is 4 or 5. The dims are always in that
// logical order; `nhwc` (2-D only) says the memory holds x and y as
// [N, H, W, C] and w as [K, R, S, C / groups] (cuDNN's NHWC format).
struct CudnnConvShape {
  int nb_dims = 0;
  int x[5] = {}, w[5] = {}, y[5] = {};
  int pads[3] = {}, strides[3] = {}, dilations[3] = {};
  int groups = 1;
  int32_t dtype = 0;  // LOOM_DTYPE_*
  bool nhwc = false;
};

// Channels-last dims ([N, H, W, C]; a weight's [K, R, S, C]) in the logical
// order cuDNN's descriptors take ([N, C, H, W]; [K, C, R, S]), and back.
inline Dims nchw_order(const Dims& nhwc) { return {nhwc[0], nhwc[3], nhwc[1], nhwc[2]}; }
inline Dims nhwc_order(const Dims& nchw) { return {nchw[0], nchw[2], nchw[3], nchw[1]}; }

// cuDNN's fused convolution (cudnnConvolutionBiasActivationForward: y =
// act(conv(x, w) + z + bias)) can replace the separate epilogue pass when
// the data are float32 (its FLOAT_CONFIG) or float16 (PSEUDO_HALF_CONFIG:
// half data and bias, float compute; fp16 mode's float32 nodes widen after
// the convolution and never get here), there is a bias (the call takes
// one), and the activation is ReLU, or none with the IMPLICIT_PRECOMP_GEMM
// algorithm (the only one cuDNN fuses an identity activation with).
inline bool cudnn_can_fuse(int32_t dtype, bool has_bias, bool relu, bool none, bool precomp_gemm_algo) {
  return (dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_FLOAT16) && has_bias &&
         (relu || (none && precomp_gemm_algo));
}

// The bias descriptor of output y: dims [1, C, 1, ...], contiguous strides.
inline void cudnn_bias_dims(const CudnnConvShape& s, int* dims, int* strides) {
  for (int i = 0; i < s.nb_dims; ++i) dims[i] = i == 1 ? s.y[1] : 1;
  for (int i = s.nb_dims - 1; i >= 0; --i) strides[i] = i == s.nb_dims - 1 ? 1 : strides[i + 1] * dims[i + 1];
}

namespace geometry_detail {

inline int to_int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw std::out_of_range(std::string(what) + " " + std::to_string(v) + " exceeds cuDNN's range");
  return static_cast<int>(v);
}

// Lifts a 1-D spatial vector to 2-D with `fill` for the new leading dim.
inline Dims lift(const Dims& v, size_t spatial, int64_t fill) {
  if (spatial != 1) return v;
  Dims out{fill};
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

}  // namespace geometry_detail

// Builds the cuDNN problem from full tensor dims (rank 3..5). Throws
// std::out_of_range when a dim, or a tensor's element count, does not fit
// cuDNN's 32-bit sizes; std::invalid_argument on ranks it cannot take.
inline CudnnConvShape cudnn_conv_shape(const Dims& x, const Dims& w, const Dims& y, const Dims& pads,
                                       const Dims& strides, const Dims& dilations, int64_t groups, int32_t dtype) {
  namespace gd = geometry_detail;
  const size_t rank = x.size();
  if (rank < 3 || rank > 5 || w.size() != rank || y.size() != rank)
    throw std::invalid_argument("convolution tensors must have equal rank 3, 4 or 5");
  const size_t spatial = rank - 2;
  if (pads.size() != spatial || strides.size() != spatial || dilations.size() != spatial)
    throw std::invalid_argument("convolution pads, strides or dilations have the wrong length");
  auto lift_tensor = [&](const Dims& t) {
    Dims out{t[0], t[1]};
    const Dims s = gd::lift(Dims(t.begin() + 2, t.end()), spatial, 1);
    out.insert(out.end(), s.begin(), s.end());
    return out;
  };
  const Dims lx = lift_tensor(x), lw = lift_tensor(w), ly = lift_tensor(y);
  const Dims lp = gd::lift(pads, spatial, 0), ls = gd::lift(strides, spatial, 1), ld = gd::lift(dilations, spatial, 1);
  CudnnConvShape s;
  s.nb_dims = static_cast<int>(lx.size());
  for (const Dims* t : {&lx, &lw, &ly}) {
    int64_t n = 1;
    for (int64_t d : *t) n = gd::mul(n, d);
    if (n > INT_MAX)
      throw std::out_of_range("a convolution tensor of " + std::to_string(n) + " elements exceeds cuDNN's range");
  }
  for (int i = 0; i < s.nb_dims; ++i) {
    s.x[i] = gd::to_int(lx[static_cast<size_t>(i)], "dim");
    s.w[i] = gd::to_int(lw[static_cast<size_t>(i)], "dim");
    s.y[i] = gd::to_int(ly[static_cast<size_t>(i)], "dim");
  }
  for (int i = 0; i + 2 < s.nb_dims; ++i) {
    s.pads[i] = gd::to_int(lp[static_cast<size_t>(i)], "pad");
    s.strides[i] = gd::to_int(ls[static_cast<size_t>(i)], "stride");
    s.dilations[i] = gd::to_int(ld[static_cast<size_t>(i)], "dilation");
  }
  s.groups = gd::to_int(groups, "group");
  s.dtype = dtype;
  return s;
}

// The key of a convolution problem in EpContext::conv_choices: direction,
// every shape, type, pads, strides, dilations, groups, math type and
// search mode -- everything the choice of algorithm depends on.
inline std::string conv_choice_key(const char* direction, const CudnnConvShape& s, int math_type, bool exhaustive) {
  std::string k(direction);
  auto ints = [&](const char* tag, const int* v, int n) {
    k += tag;
    for (int i = 0; i < n; ++i) {
      if (i > 0) k += ',';
      k += std::to_string(v[i]);
    }
  };
  k += "|t" + std::to_string(s.dtype) + "|m" + std::to_string(math_type) + (exhaustive ? "|ex" : "|he");
  if (s.nhwc) k += "|nhwc";
  ints("|x", s.x, s.nb_dims);
  ints("|w", s.w, s.nb_dims);
  ints("|y", s.y, s.nb_dims);
  ints("|p", s.pads, s.nb_dims - 2);
  ints("|s", s.strides, s.nb_dims - 2);
  ints("|d", s.dilations, s.nb_dims - 2);
  k += "|g" + std::to_string(s.groups);
  return k;
}

}  // namespace loom::cuda
