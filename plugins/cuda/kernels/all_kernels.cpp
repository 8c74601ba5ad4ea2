// Every op family of the CUDA EP, registered into one table.
#include "kernel_table.h"
#include "kernels/families.h"

namespace loom::cuda {

void register_all_kernels(KernelTable& table) {
  register_elementwise_kernels(table);
  register_matmul_kernels(table);
  register_movement_kernels(table);
  register_reduce_kernels(table);
  register_norm_kernels(table);
  register_conv_kernels(table);
  register_pool_kernels(table);
  register_batch_norm_kernels(table);
  if (const std::vector<int32_t> types = nhwc_types(table.context().options); !types.empty()) {
    register_nhwc_conv_kernels(table, types);
    register_nhwc_pool_kernels(table, types);
  }
}

}  // namespace loom::cuda
