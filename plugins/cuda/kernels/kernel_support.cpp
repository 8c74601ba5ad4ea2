#include "kernels/kernel_support.h"

namespace loom::cuda {

double host_scalar(const sdk::KernelContext& ctx, size_t input, double fallback) {
  sdk::ConstTensor t = ctx.input(input);
  if (!t.exists() || t.size() == 0) return fallback;
  const LOOM_MemoryInfo* m = sdk::host().tensor_memory(t.raw());
  if (m != nullptr && !m->host_accessible)
    throw sdk::Error("cuda: input " + std::to_string(input) + " should be in host memory", LOOM_STATUS_FAIL);
  const void* p = t.raw_data();
  switch (t.dtype()) {
    case LOOM_DTYPE_FLOAT: return static_cast<const float*>(p)[0];
    case LOOM_DTYPE_DOUBLE: return static_cast<const double*>(p)[0];
    case LOOM_DTYPE_FLOAT16: return static_cast<float>(static_cast<const sdk::Float16*>(p)[0]);
    case LOOM_DTYPE_BFLOAT16: return static_cast<float>(static_cast<const sdk::BFloat16*>(p)[0]);
    default: return static_cast<double>(t.to_int64_vector()[0]);
  }
}

std::string rank_at_most(const sdk::Node& node, size_t input, int max_rank) {
  auto shape = node.input_shape(input);
  if (!shape) return "input " + std::to_string(input) + " has unknown rank";
  if (shape->size() > static_cast<size_t>(max_rank))
    return "input " + std::to_string(input) + " has rank " + std::to_string(shape->size()) + " (at most " +
           std::to_string(max_rank) + ")";
  return {};
}

}  // namespace loom::cuda
