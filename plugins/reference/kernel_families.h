// The reference EP's kernel families. Each family lives in
// kernels/<family>.cpp and registers its kernels into the EP's table.
#pragma once

#include "loom/sdk.h"

namespace loom::reference {

void register_elementwise_kernels(sdk::KernelRegistry& r);  // unary, binary, variadic, Cast, Where, Clip
void register_tensor_kernels(sdk::KernelRegistry& r);       // shape / data movement
void register_reduction_kernels(sdk::KernelRegistry& r);    // reductions, softmax, norms, TopK, CumSum
void register_nn_kernels(sdk::KernelRegistry& r);           // Conv, pooling, MatMul, Gemm, quantization
void register_sequence_kernels(sdk::KernelRegistry& r);     // Sequence*, SplitToSequence, ConcatFromSequence
void register_optional_kernels(sdk::KernelRegistry& r);     // Optional, OptionalHasElement, OptionalGetElement
void register_control_flow_kernels(sdk::KernelRegistry& r);  // If, Loop, Scan, SequenceMap
void register_text_kernels(sdk::KernelRegistry& r);         // StringNormalizer, TfIdfVectorizer
void register_training_kernels(sdk::KernelRegistry& r);     // ai.onnx.preview.training optimizers
void register_random_kernels(sdk::KernelRegistry& r);       // RandomUniform/Normal(Like), Bernoulli
void register_signal_kernels(sdk::KernelRegistry& r);       // DFT, STFT, windows, MelWeightMatrix
void register_contrib_kernels(sdk::KernelRegistry& r);      // com.microsoft contrib ops (ORT semantics)
void register_ml_kernels(sdk::KernelRegistry& r);
void register_image_kernels(sdk::KernelRegistry& r);        // ImageDecoder (codecs under image/)

// The channels-last ops the core's layout phase makes (core
// transform/passes/channels_last.h: activations NHWC, weights OHWI): Conv,
// FusedConv, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
// Registered only with the option prefer_nhwc, so that the layout phase
// rewrites nodes this EP runs only when asked (tests of the phase).
inline constexpr const char* kNhwcDomain = "loom.nhwc";
void register_nhwc_kernels(sdk::KernelRegistry& r);           // ai.onnx.ml: Binarizer, ArrayFeatureExtractor, LabelEncoder

}  // namespace loom::reference
