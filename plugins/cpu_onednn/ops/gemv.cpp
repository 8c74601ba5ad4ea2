#include "ops/gemv.h"

#include <algorithm>

#include "compiled_partition.h"
#include "ops/host_parallel.h"

namespace loom::onednn {
namespace {

using dnnl::memory;

// Outputs computed together: their rows of W^T are read side by side, each
// into its own accumulators, so x is loaded once per block and the memory
// system fetches that many streams at once. 16 with AVX-512 (half its 32
// registers): MobileNetV2, same process, alternating runs at 1 thread, 8
// rows took 2-3 % less time per run than 4 and 16 another 1.4-1.8 % less
// (24 no better; 2 threads unchanged). 4 elsewhere: AVX2's 16 registers
// hold 4 rows of two-register accumulators and x.
constexpr int64_t kWideRows = 16;
constexpr int64_t kRows = 4;
constexpr int64_t kLanes = 16;
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

float horizontal_sum(Lanes v) {
  float s = 0.f;
  for (int64_t i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

// y[n] = sum_k wt[n * k_size + k] * x[k] for n in [n0, n1) (+ bias),
// kRowsPerBlock outputs at a time.
template <int64_t kRowsPerBlock>
__attribute__((always_inline)) inline void gemv_rows_body(const float* x, const float* wt, const float* bias,
                                                          bool bias_scalar, float* y, int64_t k_size, int64_t n0,
                                                          int64_t n1) {
  const int64_t k_vec = k_size / kLanes * kLanes;
  for (int64_t n = n0; n < n1; n += kRowsPerBlock) {
    const int64_t rows = std::min(kRowsPerBlock, n1 - n);
    Lanes acc[kRowsPerBlock] = {};
    for (int64_t k = 0; k < k_vec; k += kLanes) {
      Lanes xv;
      __builtin_memcpy(&xv, x + k, sizeof(xv));
      for (int64_t r = 0; r < rows; ++r) {
        Lanes wv;
        __builtin_memcpy(&wv, wt + (n + r) * k_size + k, sizeof(wv));
        acc[r] += wv * xv;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      float s = horizontal_sum(acc[r]);
      for (int64_t k = k_vec; k < k_size; ++k) s += wt[(n + r) * k_size + k] * x[k];
      if (bias != nullptr) s += bias[bias_scalar ? 0 : n + r];
      y[n + r] = s;
    }
  }
}

__attribute__((target("avx512f,fma"))) void gemv_rows_avx512(const float* x, const float* wt, const float* bias,
                                                             bool bias_scalar, float* y, int64_t k_size, int64_t n0,
                                                             int64_t n1) {
  gemv_rows_body<kWideRows>(x, wt, bias, bias_scalar, y, k_size, n0, n1);
}

__attribute__((target_clones("avx2", "default"))) void gemv_rows_narrow(const float* x, const float* wt,
                                                                      const float* bias, bool bias_scalar, float* y,
                                                                      int64_t k_size, int64_t n0, int64_t n1) {
  gemv_rows_body<kRows>(x, wt, bias, bias_scalar, y, k_size, n0, n1);
}

}  // namespace

std::optional<ValueId> build_gemv(ProgramBuilder& b, ValueId x, ValueId weights, std::optional<ValueId> bias,
                                  const std::vector<int64_t>& dst_dims, const std::string& name,
                                  const std::string& label) {
  const std::vector<int64_t>& wd = b.dims(weights);
  if (wd.size() != 2 || element_count(b.dims(x)) != wd[0] || element_count(dst_dims) != wd[1]) return std::nullopt;
  const int64_t k_size = wd[0], n_size = wd[1];
  if (!b.is_constant(weights) || k_size * n_size < kGemvMinWeights || b.desc(x).data_type() != memory::data_type::f32 ||
      b.desc(weights).data_type() != memory::data_type::f32)
    return std::nullopt;
  int64_t bias_count = 0;
  if (bias) {
    bias_count = element_count(b.dims(*bias));
    if ((bias_count != 1 && bias_count != n_size) || b.desc(*bias).data_type() != memory::data_type::f32)
      return std::nullopt;
  }
  // W^T row-major: a K x N desc with strides {1, K}. A Gemm with transB
  // already is (its bytes are used as they are); otherwise packed once.
  const ValueId wt = b.require(weights, memory::desc({k_size, n_size}, memory::data_type::f32, {1, k_size}));
  std::vector<ValueId> args = {b.plain(x), wt};
  if (bias) args.push_back(b.plain(*bias));
  const ValueId dst = b.new_value(plain_desc(dst_dims), dst_dims, name);
  args.push_back(dst);
  const bool has_bias = bias.has_value(), bias_scalar = bias_count == 1;
  const int threads = b.options().threads;
  const bool wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  b.add_host_step(
      [=](const std::vector<dnnl::memory>& m) {
        const auto* xs = static_cast<const float*>(m[0].get_data_handle());
        const auto* w = static_cast<const float*>(m[1].get_data_handle());
        const float* bias_data = has_bias ? static_cast<const float*>(m[2].get_data_handle()) : nullptr;
        auto* y = static_cast<float*>(m[has_bias ? 3 : 2].get_data_handle());
        // Blocks of kWideRows outputs per thread (a multiple of kRows).
        const int64_t blocks = (n_size + kWideRows - 1) / kWideRows;
        for_each_thread_range(threads, blocks, [&](int64_t b0, int64_t b1) {
          const int64_t n0 = b0 * kWideRows, n1 = std::min(n_size, b1 * kWideRows);
          if (wide) gemv_rows_avx512(xs, w, bias_data, bias_scalar, y, k_size, n0, n1);
          else gemv_rows_narrow(xs, w, bias_data, bias_scalar, y, k_size, n0, n1);
        });
      },
      args, label);
  b.name_last_step("gemv");
  return dst;
}

}  // namespace loom::onednn
