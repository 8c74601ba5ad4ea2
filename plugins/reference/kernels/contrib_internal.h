// Internal interface of the reference EP's com.microsoft contrib-op family
// (ONNX Runtime semantics): the registration functions of its files, called
// from register_contrib_kernels in contrib_gelu.cpp.
#pragma once

#include "loom/sdk.h"

namespace loom::reference {

inline constexpr const char* kMsDomain = "com.microsoft";

void register_contrib_norm_kernels(sdk::KernelRegistry& r);       // Skip/Embed/Simplified LayerNormalization
void register_contrib_attention_kernels(sdk::KernelRegistry& r);  // Attention
void register_contrib_matmul_kernels(sdk::KernelRegistry& r);     // FusedMatMul, MatMulIntegerToFloat
void register_contrib_fused_kernels(sdk::KernelRegistry& r);      // FusedConv, FusedGemm

// FusedConv's epilogue y = act(y + z) in place, the activation from
// `node`'s attributes; z may be absent. Element-wise, so any layout of y
// and z alike (the loom.nhwc FusedConv uses it too).
void fused_conv_epilogue(const sdk::Node& node, const sdk::Tensor& y, const sdk::ConstTensor& z);

}  // namespace loom::reference
