// Host-side pieces the reduction family's kernel classes share
// (reduce_kernels.cpp, softmax_kernels.cpp, topk_kernels.cpp,
// scan_kernels.cpp, norm_kernels.cpp): the sub-registrations that
// register_reduce_kernels calls, launch-result and planning-error
// translation, and claim-time checks.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/kernel_support.h"

namespace loom::cuda {

// Sub-registrations of register_reduce_kernels.
void register_softmax_kernels(KernelTable& table);  // Softmax, LogSoftmax
void register_topk_kernels(KernelTable& table);     // TopK
void register_scan_kernels(KernelTable& table);     // CumSum
// Sub-registration of register_norm_kernels.
void register_embed_layer_norm_kernels(KernelTable& table);  // com.microsoft EmbedLayerNormalization

inline const std::vector<int32_t> kFloat3Types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE};
inline const std::vector<int32_t> kFloat3IntTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE,
                                                     LOOM_DTYPE_INT32, LOOM_DTYPE_INT64};

// A launcher's result as an SDK error: cudaErrorInvalidValue means the
// launcher has no kernel for the type.
inline void check_family_launch(cudaError_t e, const std::string& op, int32_t dtype) {
  if (e == cudaErrorInvalidValue)
    throw sdk::Error("cuda " + op + ": no kernel for " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
  check(e, (op + " launch").c_str());
}

// Runs a planning step, turning its std::invalid_argument into an
// INVALID_ARGUMENT error naming the op.
template <class F>
auto planned(const std::string& op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw sdk::Error("cuda " + op + ": " + e.what(), LOOM_STATUS_INVALID_ARGUMENT);
  }
}

// Claim-time check: input 0's rank, when known, is at most kMaxRank.
inline std::string input_rank_fits(const sdk::Node& node) {
  auto shape = node.input_shape(0);
  if (shape && shape->size() > static_cast<size_t>(kMaxRank))
    return "input 0 has rank " + std::to_string(shape->size()) + " (at most " + std::to_string(kMaxRank) + ")";
  return {};
}

// Whether the node names output i (optional outputs may be left unnamed).
inline bool names_output(const sdk::Node& node, size_t i) {
  return i < node.output_count() && !node.output_name(i).empty();
}

}  // namespace loom::cuda
