#include "kernel_families.h"

namespace loom::reference {

void register_reduction_kernels(sdk::KernelRegistry&) {}

}  // namespace loom::reference
