// Neural-network kernel family: the entry point calls the registration
// function of each of the family's files (see nn_internal.h).
#include "kernel_families.h"
#include "kernels/nn_internal.h"

namespace loom::reference {

void register_nn_kernels(sdk::KernelRegistry& r) {
  register_nn_conv_kernels(r);
  register_nn_pool_kernels(r);
  register_nn_matmul_kernels(r);
  register_nn_quant_kernels(r);
  register_nn_spatial_kernels(r);
  register_nn_rnn_kernels(r);
  register_nn_attention_kernels(r);
  register_nn_recent_kernels(r);
  register_nn_recurrent_state_kernels(r);
  register_nn_deform_conv_kernels(r);
  register_nn_flex_attention_kernels(r);
}

}  // namespace loom::reference
