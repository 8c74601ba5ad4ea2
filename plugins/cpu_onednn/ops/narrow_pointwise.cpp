#include "ops/narrow_pointwise.h"

#include <immintrin.h>
#include <omp.h>

#include <limits>

#include "compiled_partition.h"
#include "ops/conv_geometry.h"
#include "ops/host_parallel.h"
#include "ops/post_ops.h"

namespace loom::onednn {
namespace {

using dnnl::memory;

typedef float Wide __attribute__((vector_size(16 * sizeof(float))));
typedef float Narrow __attribute__((vector_size(8 * sizeof(float))));

// Rows computed together: 8 x (Q + 1) accumulators, the Q + 1 weight
// vectors of one input channel and a broadcast fit AVX-512's 32 registers.
constexpr int64_t kTileRows = 8;
// Threads split a step's rows at multiples of this (of every kernel's rows
// per tile), so only the last rows of the step run as single-row tiles.
constexpr int64_t kSplitRows = 24;

// Compiled for AVX-512 (the step is only built where the CPU has it) and
// always inlined into the entry points, so no vector crosses a call.
#pragma GCC diagnostic ignored "-Wpsabi"
#define LOOM_INLINE inline __attribute__((always_inline, target("avx512f,fma")))

template <class V>
LOOM_INLINE V load(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

template <class V>
LOOM_INLINE void store(float* p, V v) {
  __builtin_memcpy(p, &v, sizeof(v));
}

// A broadcast (written with the vector extension, GCC builds it on the stack).
template <class V>
LOOM_INLINE V splat(float x);
template <>
LOOM_INLINE Wide splat<Wide>(float x) {
  return reinterpret_cast<Wide>(_mm512_set1_ps(x));
}
template <>
LOOM_INLINE Narrow splat<Narrow>(float x) {
  return reinterpret_cast<Narrow>(_mm256_set1_ps(x));
}

template <class V>
LOOM_INLINE V clamp(V a, float lo, float hi) {
  const V l = splat<V>(lo), h = splat<V>(hi);
  a = a < l ? l : a;  // a NaN stays NaN, as ONNX Clip leaves it
  return a > h ? h : a;
}

struct Geometry {
  int64_t k, n;    // input channels; output channels (see kernels_for)
  float lo, hi;    // the fused clamp (-inf, inf when none)
};

// Output rows [m, m + R) (pixels, channels-last): in[m..][k] times the
// weights (row k at weights + k * weight_stride), plus bias, plus the
// residual's rows when `Residual`, clamped; output channels [col, col + 16 Q
// (+ 8)) of the n. They are Q 16-lane vectors, then one 8-lane vector when
// `Half`. `weights` points at the tile's first column.
template <int Q, bool Half, int R, bool Residual>
LOOM_INLINE void tile(const float* in, const float* weights, int64_t weight_stride, const float* bias,
                      const float* residual, float* out, const Geometry& g, int64_t m, int64_t col) {
  bias += col;
  out += col;
  if (Residual) residual += col;
  constexpr int kWide = Q > 0 ? Q : 1;
  Wide acc[R][kWide];
  Narrow tail[R];
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < Q; ++q) acc[r][q] = load<Wide>(bias + 16 * q);
    if (Half) tail[r] = load<Narrow>(bias + 16 * Q);
  }
  const float* a = in + m * g.k;
  for (int64_t k = 0; k < g.k; ++k) {
    const float* w = weights + k * weight_stride;
    Wide wide[kWide];
    for (int q = 0; q < Q; ++q) wide[q] = load<Wide>(w + 16 * q);
    const Narrow narrow = Half ? load<Narrow>(w + 16 * Q) : Narrow{};
    for (int r = 0; r < R; ++r) {
      const float v = a[r * g.k + k];
      for (int q = 0; q < Q; ++q) acc[r][q] += splat<Wide>(v) * wide[q];
      if (Half) tail[r] += splat<Narrow>(v) * narrow;
    }
  }
  for (int r = 0; r < R; ++r) {
    float* o = out + (m + r) * g.n;
    const float* res = Residual ? residual + (m + r) * g.n : nullptr;
    for (int q = 0; q < Q; ++q) {
      Wide v = acc[r][q];
      if (Residual) v += load<Wide>(res + 16 * q);
      store(o + 16 * q, clamp(v, g.lo, g.hi));
    }
    if (!Half) continue;
    Narrow v = tail[r];
    if (Residual) v += load<Narrow>(res + 16 * Q);
    store(o + 16 * Q, clamp(v, g.lo, g.hi));
  }
}

// Output rows [m0, m1), R rows at a time, in column chunks of Q 16-lane
// vectors (then one 8-lane vector when `Half`): one chunk on narrow outputs
// (n = 16 Q + 8), n / 16 Q chunks on expansions.
template <int Q, bool Half, int R, bool Residual>
__attribute__((target("avx512f,fma"))) void pointwise_rows(const float* in, const float* packed, const float* bias,
                                                       const float* residual, float* out, const Geometry& g,
                                                       int64_t m0, int64_t m1) {
  constexpr int64_t kChunk = 16 * Q + (Half ? 8 : 0);
  int64_t m = m0;
  for (; m + R <= m1; m += R)
    for (int64_t c = 0; c < g.n; c += kChunk)
      tile<Q, Half, R, Residual>(in, packed + c, g.n, bias, residual, out, g, m, c);
  for (; m < m1; ++m)
    for (int64_t c = 0; c < g.n; c += kChunk)
      tile<Q, Half, 1, Residual>(in, packed + c, g.n, bias, residual, out, g, m, c);
}

using RowsFn = void (*)(const float*, const float*, const float*, const float*, float*, const Geometry&, int64_t,
                        int64_t);

// A kernel without and with the residual: the residual is a template
// argument, as a run-time test in the tile made GCC keep the accumulators on
// the stack across it (30 % slower on MobileNetV2's 16->96 expansion).
struct Kernels {
  RowsFn plain = nullptr, residual = nullptr;
};

template <int Q, bool Half>
Kernels narrow_kernels() {
  return {pointwise_rows<Q, Half, kTileRows, false>, pointwise_rows<Q, Half, kTileRows, true>};
}

// Q vectors of accumulators for R = 24 / Q rows (with the Q weight vectors
// and a broadcast, within AVX-512's 32 registers).
template <int Q>
Kernels expand_kernels() {
  return {pointwise_rows<Q, false, 24 / Q, false>, pointwise_rows<Q, false, 24 / Q, true>};
}

// Input channels an expansion may have, and its weights' size: they stay in
// the L1 / L2 cache while every tile reads them.
constexpr int64_t kExpandMaxInputs = 64;
constexpr int64_t kExpandMaxWeightBytes = 256 * 1024;

enum class Kind { kNarrow, kExpand };

// The kernels for k input and n output channels and which kind they are, or
// nullopt: narrow outputs (16 Q + 8 with Q < 3, or 16) first, then
// expansions (k <= 64, n a multiple of 16).
std::optional<std::pair<Kind, Kernels>> kernels_for(int64_t k, int64_t n) {
  switch (n) {
    case 8: return std::pair{Kind::kNarrow, narrow_kernels<0, true>()};
    case 16: return std::pair{Kind::kNarrow, narrow_kernels<1, false>()};
    case 24: return std::pair{Kind::kNarrow, narrow_kernels<1, true>()};
    case 40: return std::pair{Kind::kNarrow, narrow_kernels<2, true>()};
    default: break;
  }
  if (k > kExpandMaxInputs || n % 16 != 0 || k * n * static_cast<int64_t>(sizeof(float)) > kExpandMaxWeightBytes)
    return std::nullopt;
  const int64_t vectors = n / 16;
  if (vectors % 6 == 0) return std::pair{Kind::kExpand, expand_kernels<6>()};
  if (vectors % 4 == 0) return std::pair{Kind::kExpand, expand_kernels<4>()};
  if (vectors % 3 == 0) return std::pair{Kind::kExpand, expand_kernels<3>()};
  if (vectors % 2 == 0) return std::pair{Kind::kExpand, expand_kernels<2>()};
  return std::pair{Kind::kExpand, expand_kernels<1>()};
}

// Small maps (at most 256 pixels: MobileNetV2's 14x14 and 7x7 stages):
// weights packed per column chunk of 16 Q channels ([chunk][k][16 Q], one
// contiguous block a chunk), each chunk computing its pixels 7 rows at a
// time while its weights stay in cache. Up to 2 MB of weights: ResNet-50's
// 7x7 layers (4 MB) ran 1.3-1.9 % slower than with oneDNN.
constexpr int64_t kSmallMapMaxPixels = 256;
constexpr int64_t kSmallMapMaxWeightBytes = 2 * 1024 * 1024;
// Threads split the chunks on maps up to this many pixels (each reads the
// whole input, a few KB per channel), and the rows on larger ones (14x14:
// splitting chunks there ran 1.5 % slower at 2 threads).
constexpr int64_t kChunkSplitMaxPixels = 64;
constexpr int kSmallMapRows = 7;

template <int Q, bool Residual>
__attribute__((target("avx512f,fma"))) void chunk_columns(const float* in, const float* packed, const float* bias,
                                                         const float* residual, float* out, const Geometry& g,
                                                         int64_t m0, int64_t m1, int64_t c0, int64_t c1) {
  constexpr int R = kSmallMapRows;
  for (int64_t c = c0; c < c1; ++c) {
    const float* weights = packed + c * g.k * 16 * Q;
    int64_t m = m0;
    for (; m + R <= m1; m += R)
      tile<Q, false, R, Residual>(in, weights, 16 * Q, bias, residual, out, g, m, c * 16 * Q);
    for (; m < m1; ++m) tile<Q, false, 1, Residual>(in, weights, 16 * Q, bias, residual, out, g, m, c * 16 * Q);
  }
}

using ChunksFn = void (*)(const float*, const float*, const float*, const float*, float*, const Geometry&, int64_t,
                          int64_t, int64_t, int64_t);

struct ChunkKernels {
  ChunksFn plain = nullptr, residual = nullptr;
  int64_t chunk_channels = 0;
};

// The small-map kernels for k input and n output channels (a multiple of
// 32) and `pixels`, or nullopt.
std::optional<ChunkKernels> chunk_kernels_for(int64_t k, int64_t n, int64_t pixels) {
  if (pixels > kSmallMapMaxPixels || n % 32 != 0 ||
      k * n * static_cast<int64_t>(sizeof(float)) > kSmallMapMaxWeightBytes)
    return std::nullopt;
  if (n % 48 == 0) return ChunkKernels{chunk_columns<3, false>, chunk_columns<3, true>, 48};
  return ChunkKernels{chunk_columns<2, false>, chunk_columns<2, true>, 32};
}

// The step's own operands in its memories from `at` on: packed weights,
// bias, dst, then the residual when it is read where it is (in place, it is
// dst).
struct Operands {
  const float* weights;
  const float* bias;
  float* out;
  const float* residual;  // nullptr when none
};

Operands operands(const std::vector<dnnl::memory>& m, size_t at, bool in_place, bool has_residual) {
  Operands o{static_cast<const float*>(m[at].get_data_handle()), static_cast<const float*>(m[at + 1].get_data_handle()),
             static_cast<float*>(m[at + 2].get_data_handle()), nullptr};
  if (has_residual) o.residual = in_place ? o.out : static_cast<const float*>(m[at + 3].get_data_handle());
  return o;
}

// Bytes of input rows each thread computes at once when the step is fed by
// rows (about the core's L1 data cache).
constexpr int64_t kFedBandBytes = 32 * 1024;

// The step reading `producer`'s rows as it computes them, band by band per
// thread, from a buffer that stays in cache: `args` are the step's own
// (input first, which the producer writes and which gets no bytes).
void build_fed_by_rows(ProgramBuilder& b, ProgramBuilder::BandRows producer, RowsFn kernel, const Geometry& g,
                       std::vector<ValueId> args, bool in_place, bool has_residual, const std::string& label) {
  const int threads = b.options().threads;
  const int64_t row_floats = producer.row_floats, row_pixels = row_floats / g.k;
  const int64_t band = std::max<int64_t>(1, kFedBandBytes / (row_floats * static_cast<int64_t>(sizeof(float))));
  const int64_t buffer_floats = threads * band * row_floats;
  const size_t fed = producer.args.size();
  std::vector<ValueId> all = producer.args;
  all.insert(all.end(), args.begin() + 1, args.end());  // packed weights, bias, dst, [residual]
  all.push_back(b.new_value(memory::desc({buffer_floats}, memory::data_type::f32, memory::format_tag::a),
                            {buffer_floats}));
  const int64_t row_count = producer.row_count;
  auto rows = std::move(producer.rows);
  b.add_host_step(
      [=](const std::vector<dnnl::memory>& m) {
        const Operands o = operands(m, fed, in_place, has_residual);
        auto* buffers = static_cast<float*>(m.back().get_data_handle());
        for_each_thread_range(threads, row_count, [&](int64_t r0, int64_t r1) {
          float* buffer = buffers + omp_get_thread_num() * band * row_floats;
          for (int64_t r = r0; r < r1; r += band) {
            const int64_t end = std::min(r1, r + band), first = r * row_pixels;
            rows(m.data(), buffer, r, end);
            kernel(buffer, o.weights, o.bias, o.residual != nullptr ? o.residual + first * g.n : nullptr,
                   o.out + first * g.n, g, 0, (end - r) * row_pixels);
          }
        });
      },
      all, producer.label + " + " + label);
}

// The small-map step: `args` are the step's (input, chunk-packed weights,
// bias, dst, [residual]).
void add_small_map_step(ProgramBuilder& b, const std::vector<ValueId>& args, const ChunkKernels& kernels,
                        const Geometry& g, int64_t pixels, bool in_place, bool has_residual, const std::string& label) {
  const ChunksFn kernel = has_residual ? kernels.residual : kernels.plain;
  const int64_t chunks = g.n / kernels.chunk_channels;
  const bool split_rows = pixels > kChunkSplitMaxPixels;
  const int threads = b.options().threads;
  b.add_host_step(
      [=](const std::vector<dnnl::memory>& m) {
        const auto* in = static_cast<const float*>(m[0].get_data_handle());
        const Operands o = operands(m, 1, in_place, has_residual);
        if (split_rows) {
          const int64_t units = (pixels + kSmallMapRows - 1) / kSmallMapRows;
          for_each_thread_range(threads, units, [&](int64_t u0, int64_t u1) {
            kernel(in, o.weights, o.bias, o.residual, o.out, g, u0 * kSmallMapRows,
                   std::min(pixels, u1 * kSmallMapRows), 0, chunks);
          });
        } else {
          for_each_thread_range(threads, chunks, [&](int64_t c0, int64_t c1) {
            kernel(in, o.weights, o.bias, o.residual, o.out, g, 0, pixels, c0, c1);
          });
        }
      },
      args, label);
}

}  // namespace

std::optional<size_t> build_narrow_pointwise(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("fma")) return std::nullopt;
  const ValueId x = b.value_of(n.inputs[0]);
  const ValueId w = b.value_of(n.inputs[1]);
  const std::vector<int64_t> xd = b.dims(x), wd = b.dims(w);
  if (xd.size() != 4 || wd.size() != 4) return std::nullopt;
  const ConvShape s = conv_shape(n, xd, wd, false);
  const int64_t pixels = xd[0] * xd[2] * xd[3];
  const auto kernels = kernels_for(xd[1], s.out_channels);
  const auto chunked = kernels ? std::nullopt : chunk_kernels_for(xd[1], s.out_channels, pixels);
  if ((!kernels && !chunked) || !is_pointwise(s) || b.desc(x) != nhwc_desc(xd) ||
      b.desc(w).data_type() != memory::data_type::f32 || !b.is_constant(w))
    return std::nullopt;
  const int64_t in_channels = xd[1], out_channels = s.out_channels;
  const std::optional<std::vector<float>> bias = constant_conv_bias(b, n, out_channels);
  if (!bias) return std::nullopt;
  // The chain prefix this step computes: a residual Add (a sum post-op),
  // then a clamp; each of them optional.
  std::vector<PostOp> ops = plan_post_ops(b, chain, n.outputs[0], s.dst_dims, true);
  Geometry g{in_channels, out_channels, -std::numeric_limits<float>::infinity(),
             std::numeric_limits<float>::infinity()};
  size_t used = 0;
  if (used < ops.size() && ops[used].kind == PostOp::kSum && ops[used].sum_scale == 1.f &&
      ops[used].sum_zero_point == 0 && b.desc(ops[used].operand).data_type() == memory::data_type::f32)
    ++used;
  if (used < ops.size() && ops[used].kind == PostOp::kEltwise)
    if (const auto c = clamp_bounds(ops[used].eltwise)) {
      std::tie(g.lo, g.hi) = *c;
      ++used;
    }
  while (!ends_between_nodes(ops, used)) {
    if (ops[used - 1].kind == PostOp::kEltwise)
      g.lo = -std::numeric_limits<float>::infinity(), g.hi = std::numeric_limits<float>::infinity();
    --used;
  }
  // Expansions and small maps only when the step computes every post-op
  // oneDNN would fuse: PP-OCR det's expansions followed by HardSwish or
  // per-channel Mul / Add became 2-3 separate passes over a wide map, more
  // than the step saved.
  const bool expand = kernels && kernels->first == Kind::kExpand;
  if ((expand || chunked) && used < ops.size()) return std::nullopt;
  // ONNX weights [n][k][1][1] as [k][n]: one row of output channels per
  // input channel; for small maps, chunks of them ([chunk][k][chunk's n]).
  const std::vector<float> weights = b.constant_data(w);
  std::vector<float> packed(weights.size());
  const int64_t row = chunked ? chunked->chunk_channels : out_channels;
  for (int64_t o = 0; o < out_channels; ++o)
    for (int64_t i = 0; i < in_channels; ++i)
      packed[(o / row * in_channels + i) * row + o % row] = weights[o * in_channels + i];
  // With a residual that may be overwritten, the result goes to its bytes
  // (each element is read, then written, by the same thread); otherwise the
  // residual is read where it is.
  const memory::desc dst_desc = nhwc_desc(s.dst_dims);
  // Fed by rows when the depthwise step just built writes x for this step
  // alone: that step is dropped (this one computes its rows), before a
  // reorder of the residual may become the last step. Not for an expansion,
  // whose input is the narrow side, cheap to write and read back.
  std::optional<ProgramBuilder::BandRows> producer;
  if (!expand && !chunked && b.band_rows_writing(x) != nullptr) producer = b.remove_band_rows_step();
  const PostOp* sum = sum_post_op(ops, used);
  const ValueId dst = sum_destination(b, ops, used, dst_desc, s.dst_dims, result_name(n, chain, ops, used));
  std::vector<ValueId> args = {x, b.new_constant(packed, {in_channels * out_channels}),
                               b.new_constant(*bias, {out_channels}), dst};
  const bool in_place = sum != nullptr && b.same_buffer(sum->operand, dst);
  if (sum != nullptr && !in_place) args.push_back(b.require(sum->operand, dst_desc));
  const bool has_residual = sum != nullptr;
  if (chunked) {
    add_small_map_step(b, args, *chunked, g, pixels, in_place, has_residual, n.label());
    b.name_last_step("pointwise small-map");
    return finish_chain(b, n, chain, ops, used, dst);
  }
  const RowsFn kernel = has_residual ? kernels->second.residual : kernels->second.plain;
  if (producer) {
    build_fed_by_rows(b, std::move(*producer), kernel, g, args, in_place, has_residual, n.label());
    b.name_last_step("pointwise narrow row-fed");
  } else {
    const int64_t units = (pixels + kSplitRows - 1) / kSplitRows;
    const int threads = b.options().threads;
    b.add_host_step(
        [=](const std::vector<dnnl::memory>& m) {
          const auto* in = static_cast<const float*>(m[0].get_data_handle());
          const Operands o = operands(m, 1, in_place, has_residual);
          for_each_thread_range(threads, units, [&](int64_t u0, int64_t u1) {
            kernel(in, o.weights, o.bias, o.residual, o.out, g, u0 * kSplitRows, std::min(pixels, u1 * kSplitRows));
          });
        },
        args, n.label(), expand ? "pointwise expand" : "pointwise narrow");
    // An expansion's result is a wide map: a depthwise step reading it may
    // compute its rows band by band (ops/depthwise.h).
    if (expand && !has_residual) {
      const int64_t width = s.dst_dims[3];
      auto rows = [=](const dnnl::memory* m, float* out, int64_t r0, int64_t r1) {
        const auto* in = static_cast<const float*>(m[0].get_data_handle());
        kernel(in + r0 * width * g.k, static_cast<const float*>(m[1].get_data_handle()),
               static_cast<const float*>(m[2].get_data_handle()), nullptr, out, g, 0, (r1 - r0) * width);
      };
      b.set_last_band_rows({dst, {x, args[1], args[2]}, rows, xd[0] * s.dst_dims[2], width * g.n, n.label()});
    }
  }
  return finish_chain(b, n, chain, ops, used, dst);
}

}  // namespace loom::onednn
