// com.microsoft MatMulIntegerToFloat with uint8 weights or nonzero weight
// zero points (quantize_dynamic's QUInt8 weights, or asymmetric int8),
// which oneDNN 2.6's int8 matmul cannot take (s8 weights, no weight zero
// point). The weights are shifted into s8 once: w' = b - 128 for uint8
// (exact: [0, 255] -> [-128, 127]), w' = b for int8, so that
// b - b_zp[n] = w' + c[n] with c[n] = shift - b_zp[n]. oneDNN computes the
// plain integer product P = a * w' (s32, no zero points, no scales) and a
// host step forms the exact accumulator of ONNX's definition
//
//   acc[m, n] = sum_k (a[m, k] - a_zp)(b[k, n] - b_zp[n])
//             = P[m, n] - a_zp * colsum_w'[n] + c[n] * (rowsum_a[m] - K * a_zp)
//
// in 64-bit integers, then y = float(acc) * (a_scale * b_scale[n]) + bias[n]
// as the reference EP computes it (same operations, same order: same bits
// while acc fits int32, which the reference's own accumulator needs too).
// a_scale and a_zero_point are read each run (constants or run-time values).
#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <optional>

#include "host_kernels/parallel.h"
#include "ops/op_builders.h"
#include "ops/quant_params.h"

namespace loom::onednn {

size_t build_matmul_integer_to_float_shifted(ProgramBuilder& b, const NodeSpec& n) {
  // A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias
  using dnnl::memory;
  const ValueId a = b.plain(b.value_of(n.inputs[0])), w = b.value_of(n.inputs[1]);
  const std::vector<int64_t> da = b.dims(a), dw = b.dims(w);
  if (da.empty() || da.size() > 6) n.fail("A must have rank 1..6");
  if (dw.size() != 2) n.fail("B must be 2-D");
  const int64_t k = da.back(), cols = dw[1];
  if (k != dw[0]) n.fail("inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(dw[0]) + ")");
  std::vector<int64_t> onnx_dims(da.begin(), da.end() - 1);
  const int64_t rows = element_count(onnx_dims);
  onnx_dims.push_back(cols);
  const memory::data_type a_type = b.desc(a).data_type();
  if (a_type != memory::data_type::u8 && a_type != memory::data_type::s8) n.fail("A must be uint8 or int8");

  // Shifted weights, c[n] and the column sums of w', at build time.
  const bool unsigned_w = n.input_dtypes[1] == LOOM_DTYPE_UINT8;
  const int32_t shift = unsigned_w ? 128 : 0;
  const std::vector<float> wv = b.constant_data(w);
  std::vector<float> zb = n.has_input(5) ? b.constant_data(b.value_of(n.inputs[5])) : std::vector<float>{0.f};
  const std::vector<float> b_scales = constant_scales(b, n, 3);
  if (zb.size() != 1 && static_cast<int64_t>(zb.size()) != cols)
    n.fail("b_zero_point must hold 1 or " + std::to_string(cols) + " values");
  if (b_scales.size() != 1 && static_cast<int64_t>(b_scales.size()) != cols)
    n.fail("b_scale must hold 1 or " + std::to_string(cols) + " values");
  std::vector<int8_t> shifted(wv.size());
  std::vector<int64_t> colsum(static_cast<size_t>(cols), 0), c(static_cast<size_t>(cols));
  for (size_t i = 0; i < wv.size(); ++i) {
    shifted[i] = static_cast<int8_t>(static_cast<int32_t>(wv[i]) - shift);
    colsum[i % static_cast<size_t>(cols)] += shifted[i];
  }
  std::vector<float> scales(static_cast<size_t>(cols)), bias(static_cast<size_t>(cols), 0.f);
  for (int64_t j = 0; j < cols; ++j) {
    c[static_cast<size_t>(j)] = shift - static_cast<int64_t>(zb[zb.size() == 1 ? 0 : static_cast<size_t>(j)]);
    scales[static_cast<size_t>(j)] = b_scales[b_scales.size() == 1 ? 0 : static_cast<size_t>(j)];
  }
  const bool has_bias = n.has_input(6);
  if (has_bias) {
    bias = b.constant_data(b.value_of(n.inputs[6]));
    if (static_cast<int64_t>(bias.size()) != cols) n.fail("bias must hold N = " + std::to_string(cols) + " values");
  }
  const memory::desc w_plain({k, cols}, memory::data_type::s8, memory::format_tag::ab);
  const ValueId w_shifted = b.new_constant(shifted.data(), w_plain, {k, cols});

  // P = a * w' in s32.
  const ValueId src = b.view(a, {rows, k});
  const memory::desc wei({k, cols}, memory::data_type::s8, memory::format_tag::any);
  const memory::desc acc_desc({rows, cols}, memory::data_type::s32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(b.desc(src), wei, acc_desc), b.attr(), b.engine());
  const ValueId acc = b.new_value(acc_desc, {rows, cols});
  b.add_step(dnnl::matmul(pd),
             {{DNNL_ARG_SRC, b.require(src, pd.src_desc())},
              {DNNL_ARG_WEIGHTS, b.require(w_shifted, pd.weights_desc())},
              {DNNL_ARG_DST, acc}},
             pd.scratchpad_desc(), n.label());

  // The exact accumulator, scaled, plus the bias.
  const ValueId a_scale = b.plain(b.value_of(n.inputs[2]));
  if (element_count(b.dims(a_scale)) != 1 || b.desc(a_scale).data_type() != memory::data_type::f32)
    n.fail("a_scale must be one float32 value");
  std::vector<ValueId> args = {src, acc, a_scale};
  std::optional<ValueId> a_zero;
  if (n.has_input(4)) {
    a_zero = b.plain(b.value_of(n.inputs[4]));
    if (element_count(b.dims(*a_zero)) != 1 || b.desc(*a_zero).data_type() != a_type)
      n.fail("a_zero_point must be one value of A's type");
    args.push_back(*a_zero);
  }
  const ValueId out = b.new_value(plain_desc(onnx_dims), onnx_dims, n.outputs[0]);
  args.push_back(out);
  const bool signed_a = a_type == memory::data_type::s8;
  const int threads = b.options().threads;
  b.add_host_step(
      [=](const std::vector<dnnl::memory>& m) {
        const void* pa = m[0].get_data_handle();
        const auto* p = static_cast<const int32_t*>(m[1].get_data_handle());
        const float sa = *static_cast<const float*>(m[2].get_data_handle());
        int64_t za = 0;
        if (m.size() == 5)
          za = signed_a ? *static_cast<const int8_t*>(m[3].get_data_handle())
                        : *static_cast<const uint8_t*>(m[3].get_data_handle());
        auto* y = static_cast<float*>(m.back().get_data_handle());
        std::vector<float> s(scales.size());
        for (size_t j = 0; j < s.size(); ++j) s[j] = sa * scales[j];  // the reference's a_scale * b_scale[n]
        for_each_thread_range(threads, rows, [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            int64_t rowsum = 0;
            if (signed_a)
              for (int64_t i = 0; i < k; ++i) rowsum += static_cast<const int8_t*>(pa)[r * k + i];
            else
              for (int64_t i = 0; i < k; ++i) rowsum += static_cast<const uint8_t*>(pa)[r * k + i];
            const int64_t centered = rowsum - k * za;
            for (int64_t j = 0; j < cols; ++j) {
              const size_t jj = static_cast<size_t>(j);
              const int64_t exact = p[r * cols + j] - za * colsum[jj] + c[jj] * centered;
              y[r * cols + j] = static_cast<float>(static_cast<int32_t>(exact)) * s[jj] + (has_bias ? bias[jj] : 0.f);
            }
          }
        });
      },
      args, n.label() + " (zero points and scales)");
  b.define(n.outputs[0], out);
  return 0;
}

}  // namespace loom::onednn
