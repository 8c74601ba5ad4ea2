#include "kernel_families.h"

namespace loom::reference {

void register_tensor_kernels(sdk::KernelRegistry&) {}

}  // namespace loom::reference
