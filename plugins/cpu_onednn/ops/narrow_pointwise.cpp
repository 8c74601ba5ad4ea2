#include "ops/narrow_pointwise.h"

#include <omp.h>

#include <limits>

#include "compiled_partition.h"
#include "ops/conv_geometry.h"
#include "host_kernels/parallel.h"
#include "ops/post_ops.h"
#include "host_kernels/pointwise_1x1.h"

namespace loom::onednn {
namespace {

using dnnl::memory;
using Geometry = host_kernels::PointwiseGeometry;
using RowsFn = host_kernels::PointwiseRowsFn;
using ChunkKernels = host_kernels::PointwiseChunkKernels;
using ChunksFn = host_kernels::PointwiseChunksFn;
using Kind = host_kernels::PointwiseKind;
using host_kernels::kChunkSplitMaxPixels;
constexpr int64_t kSplitRows = host_kernels::kPointwiseSplitRows;
constexpr int kSmallMapRows = host_kernels::kPointwiseSmallMapRows;

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
  const auto kernels = host_kernels::pointwise_kernels_for(xd[1], s.out_channels);
  std::optional<ChunkKernels> chunked;
  if (!kernels) chunked = host_kernels::pointwise_chunk_kernels_for(xd[1], s.out_channels, pixels);
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
