// Host-side helpers for the CUDA EP's kernel classes (kernels/*_kernels.cpp):
// element type lists for registration, axis normalisation, reading a shape
// operand the host placed in host memory (KernelTable::input_on_host), and
// claim-time checks on ranks. Sizes computed from inputs go through the
// SDK's checked arithmetic (loom/sdk/checked.h).
#pragma once

#include <string>
#include <vector>

#include "cuda_check.h"
#include "kernels/index_math.h"
#include "loom/sdk.h"
#include "stream_resources.h"

namespace loom::cuda {

inline const std::vector<int32_t> kFloatTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16};
inline const std::vector<int32_t> kFloatAndIntTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_INT32,
                                                        LOOM_DTYPE_INT64};
// Every type data movement copies (by element size, without reading it).
inline const std::vector<int32_t> kAllFixedTypes = {
    LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT8,
    LOOM_DTYPE_UINT8, LOOM_DTYPE_INT16,   LOOM_DTYPE_UINT16,   LOOM_DTYPE_INT32,  LOOM_DTYPE_UINT32,
    LOOM_DTYPE_INT64, LOOM_DTYPE_UINT64,  LOOM_DTYPE_BOOL};

inline size_t element_bytes(int32_t dtype) { return sdk::dtype_size(dtype); }

// Axis in [-rank, rank) as [0, rank); throws naming the op otherwise.
inline int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& op) {
  if (axis < -rank || axis >= rank)
    throw sdk::Error("cuda " + op + ": axis " + std::to_string(axis) + " is out of range for rank " +
                         std::to_string(rank),
                     LOOM_STATUS_INVALID_ARGUMENT);
  return axis < 0 ? axis + rank : axis;
}

// The values of a host-memory input (a shape operand) as int64; empty when
// the optional input is absent.
inline std::vector<int64_t> host_int64s(const sdk::KernelContext& ctx, size_t input) {
  sdk::ConstTensor t = ctx.input(input);
  if (!t.exists()) return {};
  const LOOM_MemoryInfo* m = sdk::host().tensor_memory(t.raw());
  if (m != nullptr && !m->host_accessible)
    throw sdk::Error("cuda: input " + std::to_string(input) + " should be in host memory", LOOM_STATUS_FAIL);
  return t.to_int64_vector();
}

// A host-memory float scalar input (Clip's min, Pad's value) as double;
// `fallback` when absent or empty.
double host_scalar(const sdk::KernelContext& ctx, size_t input, double fallback);

// Claim-time checks: the rank of input `i` is known and at most kMaxRank
// (empty string), else why not.
std::string rank_at_most(const sdk::Node& node, size_t input, int max_rank = kMaxRank);

// Total elements of a tensor's dims with checked arithmetic.
inline int64_t element_count(const std::vector<int64_t>& dims, const std::string& what) {
  return sdk::checked_element_count(dims, what);
}

}  // namespace loom::cuda
