// Registration entry points of the tensor (data-movement) kernel family,
// split over kernels/tensor*.cpp; register_tensor_kernels calls them all.
#pragma once

#include "loom/sdk.h"

namespace loom::reference {

void register_tensor_shape_kernels(sdk::KernelRegistry& r);   // tensor.cpp
void register_tensor_layout_kernels(sdk::KernelRegistry& r);  // tensor_layout.cpp
void register_tensor_index_kernels(sdk::KernelRegistry& r);   // tensor_index.cpp
void register_tensor_misc_kernels(sdk::KernelRegistry& r);    // tensor_misc.cpp
void register_tensor_resize_kernels(sdk::KernelRegistry& r);  // tensor_resize.cpp
void register_tensor_recent_kernels(sdk::KernelRegistry& r);  // tensor_recent.cpp (TensorScatter, CenterCropPad)

}  // namespace loom::reference
