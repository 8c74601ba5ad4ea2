#include "ops/depthwise.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <unordered_map>

#include "compiled_partition.h"
#include "eltwise_ops.h"
#include "ops/conv_geometry.h"
#include "host_kernels/parallel.h"
#include "ops/post_ops.h"
#include "host_kernels/depthwise_3x3.h"

namespace loom::onednn {
namespace {

using dnnl::memory;
using host_kernels::depthwise_3x3_rows;
using host_kernels::depthwise_3x3_rows_parallel;
using host_kernels::kDepthwiseLanes;
using host_kernels::kDepthwiseTaps;
using Geometry = host_kernels::DepthwiseGeometry;

// The clamp [lo, hi] that eltwise node `node` computes, if it is one
// (Relu, Clip with constant bounds).
std::optional<std::pair<float, float>> clamp_of(const NodeSpec& node) {
  const auto steps = eltwise_steps_for(node);
  if (!steps || steps->size() != 1) return std::nullopt;
  return clamp_bounds(steps->front());
}

// Bytes of expanded rows a band's buffer may hold (measured on MobileNetV2's
// 112x112x96 map, 1 and 2 threads: 768 KB beat 128 and 384 KB, and was level
// with 1-2 MB).
constexpr int64_t kBandBytes = 768 * 1024;
// Smallest expanded map (bytes) computed band by band. Below it the whole
// map, written and read back at once, stays in the last-level cache, and the
// per-band calls cost about what banding saves (MobileNetV2's 1.8 MB maps:
// no gain at 1 thread, 2-4 % slower at 2).
constexpr int64_t kBandMinMapBytes = 3 * 1024 * 1024;

// Walks the bands of `band_rows` output rows in order. For each band:
// keep(from, count) moves `count` buffered input rows from buffer row `from`
// to the top (rows the previous band computed and this one reads again);
// compute(first, end, base) must produce input rows [first, end) at buffer
// rows (row - base) (never empty); convolve(o0, o1, base) computes output
// rows [o0, o1) from the buffer, whose row 0 is input row `base`.
template <class Keep, class Compute, class Convolve>
void walk_bands(const Geometry& g, int64_t band_rows, Keep keep, Compute compute, Convolve convolve) {
  int64_t base = 0, done = 0;
  for (int64_t o0 = 0; o0 < g.out_h; o0 += band_rows) {
    const int64_t o1 = std::min(g.out_h, o0 + band_rows);
    const int64_t lo = std::clamp<int64_t>(o0 * g.stride_y - g.pad_top, 0, g.h);
    const int64_t hi = std::clamp<int64_t>((o1 - 1) * g.stride_y - g.pad_top + 3, 0, g.h);
    if (lo > base) {
      if (done > lo) keep(lo - base, done - lo);
      base = lo;
      done = std::max(done, lo);
    }
    if (hi > done) {
      compute(done, hi, base);
      done = hi;
    }
    convolve(o0, o1, base);
  }
}

// How a banded step walks the map: output rows per band, buffer rows it
// needs, and the distinct numbers of input rows a band computes at once
// (the first band, the steady state, the last).
struct BandPlan {
  int64_t band_rows = 0, rows_used = 0;
  std::vector<int64_t> heights;
};

// The plan for banding `g`'s input, or nullopt when the map is too small to
// gain from it or would be one band.
std::optional<BandPlan> plan_bands(const Geometry& g) {
  const int64_t row_bytes = g.w * g.c * static_cast<int64_t>(sizeof(float));
  if (g.h * row_bytes < kBandMinMapBytes) return std::nullopt;
  const int64_t buffer_rows = std::max<int64_t>(3, kBandBytes / row_bytes);
  BandPlan plan;
  plan.band_rows = std::max<int64_t>(1, (buffer_rows - 3) / g.stride_y + 1);
  if (plan.band_rows >= g.out_h) return std::nullopt;
  walk_bands(
      g, plan.band_rows, [](int64_t, int64_t) {},
      [&](int64_t first, int64_t end, int64_t base) {
        if (std::find(plan.heights.begin(), plan.heights.end(), end - first) == plan.heights.end())
          plan.heights.push_back(end - first);
        plan.rows_used = std::max(plan.rows_used, end - base);
      },
      [](int64_t, int64_t, int64_t) {});
  return plan;
}

// What computes the map's rows for a banded step: compute(memories, out,
// first, end) writes rows [first, end) to `out` (row `first` first), reading
// the memories of `args` from `memories` on; it runs on the step's thread
// and splits its own work across threads.
struct BandSource {
  std::vector<ValueId> args;
  std::function<void(const dnnl::memory* memories, float* out, int64_t first, int64_t end)> compute;
  std::string label;
};

// The depthwise convolution of the map `source` computes, band by band: each
// band's rows go to a buffer of a few rows that stays in cache, instead of
// a whole map written to memory and read back.
void add_banded_step(ProgramBuilder& b, const Geometry& g, const BandPlan& plan, BandSource source, ValueId filters,
                     ValueId shift, ValueId dst, const std::string& label) {
  const int64_t row_floats = g.w * g.c;
  const ValueId buffer = b.new_value(
      memory::desc({plan.rows_used * row_floats}, memory::data_type::f32, memory::format_tag::a),
      {plan.rows_used * row_floats});
  std::vector<ValueId> args = std::move(source.args);
  const size_t at = args.size();
  args.insert(args.end(), {buffer, filters, shift, dst});
  const int threads = b.options().threads;
  const int64_t band_rows = plan.band_rows;
  auto compute = std::move(source.compute);
  b.add_host_step(
      [=](const std::vector<dnnl::memory>& m) {
        auto* rows = static_cast<float*>(m[at].get_data_handle());
        const auto* taps = static_cast<const float*>(m[at + 1].get_data_handle());
        const auto* bias = static_cast<const float*>(m[at + 2].get_data_handle());
        auto* out = static_cast<float*>(m[at + 3].get_data_handle());
        walk_bands(
            g, band_rows,
            [&](int64_t from, int64_t count) {
              std::memmove(rows, rows + from * row_floats, count * row_floats * sizeof(float));
            },
            [&](int64_t first, int64_t end, int64_t base) {
              compute(m.data(), rows + (first - base) * row_floats, first, end);
            },
            [&](int64_t o0, int64_t o1, int64_t base) {
              Geometry band = g;
              band.first_row = base;
              depthwise_3x3_rows_parallel(threads, rows, taps, bias, out, band, o0, o1);
            });
      },
      args, source.label + " + " + label);
  b.name_last_step("depthwise banded");
}

// The map's rows from `conv` (a band convolution, see
// ProgramBuilder::BandConv), one oneDNN primitive per band height; nullopt
// (nothing changed) when oneDNN has no primitive for a band's rows with the
// full convolution's implementation. Removes the convolution's step.
std::optional<BandSource> band_conv_source(ProgramBuilder& b, const ProgramBuilder::BandConv& candidate,
                                           const BandPlan& plan) {
  std::vector<dnnl::convolution_forward> primitives;
  std::vector<dnnl::memory::desc> src_descs, dst_descs;
  size_t scratch_bytes = 0;
  for (int64_t rows : plan.heights) {
    const auto pd = candidate.make(rows);
    if (pd.impl_info_str() != candidate.impl || is_reference_impl(pd.impl_info_str())) return std::nullopt;
    primitives.emplace_back(pd);
    src_descs.push_back(pd.src_desc());
    dst_descs.push_back(pd.dst_desc());
    scratch_bytes = std::max(scratch_bytes, pd.scratchpad_desc().get_size());
  }
  const ProgramBuilder::BandConv conv = b.remove_band_conv_step();  // `candidate` is gone with it
  BandSource source{{conv.src, conv.weights}, nullptr, conv.label};
  if (conv.bias) source.args.push_back(*conv.bias);
  if (scratch_bytes > 0) {
    const auto bytes = static_cast<int64_t>(scratch_bytes);
    source.args.push_back(b.new_value(memory::desc({bytes}, memory::data_type::u8, memory::format_tag::a), {bytes}));
  }
  const bool has_bias = conv.bias.has_value(), has_scratch = scratch_bytes > 0;
  const int64_t in_row_floats = b.dims(conv.src)[1] * b.dims(conv.src)[3];
  const dnnl::engine engine = b.engine();
  const std::vector<int64_t> heights = plan.heights;
  source.compute = [=](const dnnl::memory* m, float* out, int64_t first, int64_t end) {
    const size_t k = std::find(heights.begin(), heights.end(), end - first) - heights.begin();
    std::unordered_map<int, dnnl::memory> conv_args = {{DNNL_ARG_WEIGHTS, m[1]}};
    if (has_bias) conv_args[DNNL_ARG_BIAS] = m[2];
    if (has_scratch) conv_args[DNNL_ARG_SCRATCHPAD] = m[has_bias ? 3 : 2];
    const auto* src = static_cast<const float*>(m[0].get_data_handle());
    conv_args[DNNL_ARG_SRC] = dnnl::memory(src_descs[k], engine, const_cast<float*>(src) + first * in_row_floats);
    conv_args[DNNL_ARG_DST] = dnnl::memory(dst_descs[k], engine, out);
    dnnl::stream stream(engine);
    primitives[k].execute(stream, conv_args);
    stream.wait();
  };
  return source;
}

// The map's rows from the host step that records them (ProgramBuilder::
// BandRows), split across threads. Removes that step.
BandSource band_rows_source(ProgramBuilder& b) {
  ProgramBuilder::BandRows producer = b.remove_band_rows_step();
  const int threads = b.options().threads;
  const int64_t row_floats = producer.row_floats;
  auto rows = std::move(producer.rows);
  return {std::move(producer.args),
          [=](const dnnl::memory* m, float* out, int64_t first, int64_t end) {
            for_each_thread_range(threads, end - first, [&](int64_t r0, int64_t r1) {
              rows(m, out + r0 * row_floats, first + r0, first + r1);
            });
          },
          std::move(producer.label)};
}

// Builds the banded step when the depthwise input `x` is a large map the
// step just built computes for it alone, either a band convolution or a
// host step's rows. Returns false (nothing built) otherwise.
bool build_banded(ProgramBuilder& b, ValueId x, const Geometry& g, ValueId filters, ValueId shift, ValueId dst,
                  const std::string& label) {
  if (b.dims(x)[0] != 1) return false;
  const ProgramBuilder::BandConv* conv = b.band_conv_writing(x);
  if (conv == nullptr && b.band_rows_writing(x) == nullptr) return false;
  const std::optional<BandPlan> plan = plan_bands(g);
  if (!plan) return false;
  std::optional<BandSource> source = conv != nullptr ? band_conv_source(b, *conv, *plan) : band_rows_source(b);
  if (!source) return false;
  add_banded_step(b, g, *plan, std::move(*source), filters, shift, dst, label);
  return true;
}

}  // namespace

std::optional<size_t> build_depthwise_3x3(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  const ValueId x = b.value_of(n.inputs[0]);
  const ValueId w = b.value_of(n.inputs[1]);
  const std::vector<int64_t> xd = b.dims(x), wd = b.dims(w);
  if (xd.size() != 4 || wd.size() != 4) return std::nullopt;
  const ConvShape s = conv_shape(n, xd, wd, false);
  const int64_t channels = xd[1];
  const Window& win = s.window;
  const auto f32 = memory::data_type::f32;
  if (s.group != channels || s.out_channels != channels || channels % kDepthwiseLanes != 0 ||
      win.kernel != std::vector<int64_t>{3, 3} || win.dilations != std::vector<int64_t>{1, 1} ||
      b.desc(x).data_type() != f32 || b.desc(w).data_type() != f32 || !b.is_constant(w))
    return std::nullopt;
  for (int64_t stride : win.strides)
    if (stride != 1 && stride != 2) return std::nullopt;
  const std::optional<std::vector<float>> bias = constant_conv_bias(b, n, channels);
  if (!bias) return std::nullopt;
  Geometry g{xd[2], xd[3], channels, win.out[0], win.out[1], win.strides[0], win.strides[1],
             win.pad_begin[0], win.pad_begin[1], -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
  // Only a lone clamp may follow: oneDNN fuses longer chains (PP-OCR's
  // per-channel Mul / Add and HardSwish after each depthwise convolution) as
  // post-ops, which beats this step plus separate passes over the result.
  size_t absorbed = 0;
  if (chain.size() > 1) return std::nullopt;
  if (chain.size() == 1) {
    const auto c = clamp_of(*chain.front());
    if (!c) return std::nullopt;
    std::tie(g.lo, g.hi) = *c;
    absorbed = 1;
  }
  const std::vector<float> weights = b.constant_data(w);  // [C][1][3][3]
  const std::vector<float> packed = host_kernels::pack_depthwise_3x3_filters(weights, channels);
  const std::string& name = absorbed ? chain.front()->outputs[0] : n.outputs[0];
  const ValueId dst = b.new_value(nhwc_desc(s.dst_dims), s.dst_dims, name);
  const ValueId filters = b.new_constant(packed, {channels * kDepthwiseTaps}), shift = b.new_constant(*bias, {channels});
  if (!build_banded(b, x, g, filters, shift, dst, n.label())) {
    const ValueId src = b.require(x, nhwc_desc(xd));
    const int64_t rows = xd[0] * g.out_h, row_floats = g.out_w * g.c;
    // Output rows [r0, r1) to `out` (row r0 first) from the memories of
    // src, filters and shift: the whole map split across threads here, or
    // bands a later step asks for (ProgramBuilder::BandRows).
    auto band = [g](const dnnl::memory* m, float* out, int64_t r0, int64_t r1) {
      Geometry at = g;
      at.out_first_row = r0;
      depthwise_3x3_rows(static_cast<const float*>(m[0].get_data_handle()),
                     static_cast<const float*>(m[1].get_data_handle()),
                     static_cast<const float*>(m[2].get_data_handle()), out, at, r0, r1);
    };
    const int threads = b.options().threads;
    b.add_host_step(
        [=](const std::vector<dnnl::memory>& m) {
          auto* out = static_cast<float*>(m[3].get_data_handle());
          for_each_thread_range(threads, rows,
                                [&](int64_t r0, int64_t r1) { band(m.data(), out + r0 * row_floats, r0, r1); });
        },
        {src, filters, shift, dst}, n.label(), "depthwise");
    b.set_last_band_rows({dst, {src, filters, shift}, band, rows, row_floats, n.label()});
  }
  b.define(name, dst);
  return absorbed;
}

}  // namespace loom::onednn
