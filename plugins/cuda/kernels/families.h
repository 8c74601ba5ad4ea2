// The CUDA EP's op families, each registering its kernels and claim rules
// (kernels/<family>_kernels.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "kernel_table.h"

namespace loom::cuda {

// Unary math and activations, broadcast binary ops, Where, Clip, Cast, the
// com.microsoft GELU family.
void register_elementwise_kernels(KernelTable& table);

// MatMul, com.microsoft FusedMatMul and Attention (cuBLAS); registers the
// Gemm family too.
void register_matmul_kernels(KernelTable& table);

// Gemm and com.microsoft FusedGemm (cuBLAS, cuBLASLt epilogues).
void register_gemm_kernels(KernelTable& table);

// Data movement: Reshape and its kin, Shape, Size, Transpose, Concat, Split,
// Slice, Pad, Expand, Tile, the gathers, Range, ConstantOfShape,
// DepthToSpace, SpaceToDepth, Resize, Upsample.
void register_movement_kernels(KernelTable& table);

// ReduceX, ArgMax / ArgMin, Softmax / LogSoftmax, TopK, CumSum.
void register_reduce_kernels(KernelTable& table);

// LayerNormalization, SimplifiedLayerNormalization, InstanceNormalization,
// com.microsoft Skip(Simplified)LayerNormalization, EmbedLayerNormalization.
void register_norm_kernels(KernelTable& table);

// Conv, com.microsoft FusedConv and ConvTranspose (cuDNN).
void register_conv_kernels(KernelTable& table);

// MaxPool, AveragePool, LpPool and their global forms.
void register_pool_kernels(KernelTable& table);

// BatchNormalization (inference).
void register_batch_norm_kernels(KernelTable& table);

// The channels-last ops of the core's layout phase (transform/
// channels_last.h; X, Y NHWC, W OHWI) for `types`: Conv and FusedConv
// (conv_kernels.cpp), MaxPool, AveragePool, GlobalAveragePool and
// GlobalMaxPool (pool_kernels.cpp). register_all_kernels adds them for
// nhwc_types(options) (ep_options.h); none when that is empty.
inline constexpr const char* kNhwcDomain = "loom.nhwc";
void register_nhwc_conv_kernels(KernelTable& table, const std::vector<int32_t>& types);
void register_nhwc_pool_kernels(KernelTable& table, const std::vector<int32_t>& types);

}  // namespace loom::cuda
