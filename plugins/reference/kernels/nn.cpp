#include "kernel_families.h"

namespace loom::reference {

void register_nn_kernels(sdk::KernelRegistry&) {}

}  // namespace loom::reference
