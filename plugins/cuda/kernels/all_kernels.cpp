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
}

}  // namespace loom::cuda
