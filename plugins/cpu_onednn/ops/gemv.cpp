#include "ops/gemv.h"

#include <algorithm>

#include "compiled_partition.h"
#include "host_kernels/gemv.h"

namespace loom::onednn {

using dnnl::memory;

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
  b.add_host_step(
      [=](const std::vector<dnnl::memory>& m) {
        host_kernels::gemv(threads, static_cast<const float*>(m[0].get_data_handle()),
                           static_cast<const float*>(m[1].get_data_handle()),
                           has_bias ? static_cast<const float*>(m[2].get_data_handle()) : nullptr, bias_scalar,
                           static_cast<float*>(m[has_bias ? 3 : 2].get_data_handle()), k_size, n_size);
      },
      args, label);
  b.name_last_step("gemv");
  return dst;
}

}  // namespace loom::onednn
