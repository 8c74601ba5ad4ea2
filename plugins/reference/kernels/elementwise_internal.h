// Registration functions of the element-wise family's files; all are called
// from register_elementwise_kernels (kernels/elementwise.cpp).
#pragma once

#include "loom/sdk.h"

namespace loom::reference {

void register_elementwise_logic_kernels(sdk::KernelRegistry& r);     // elementwise_logic.cpp
void register_elementwise_unary_kernels(sdk::KernelRegistry& r);     // elementwise_unary.cpp
void register_elementwise_variadic_kernels(sdk::KernelRegistry& r);  // elementwise_variadic.cpp
void register_elementwise_cast_kernels(sdk::KernelRegistry& r);      // elementwise_cast.cpp
void register_elementwise_recent_kernels(sdk::KernelRegistry& r);    // elementwise_recent.cpp (opsets 18+)

}  // namespace loom::reference
