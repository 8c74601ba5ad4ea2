// Element-wise launchers (kernels/elementwise.cu): one templated kernel per
// shape of work -- unary (with an optional broadcast addend, for bias +
// activation), binary and ternary with broadcasting -- each switching on the
// op, so a new op is a case, not a kernel. Pointers are device memory;
// everything is queued on `stream`; n may be 0. Each returns the launch
// error, if any, or cudaErrorInvalidValue for a type the op lacks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/index_math.h"

namespace loom::cuda {

enum class UnaryOp : int {
  kIdentity, kRelu, kSigmoid, kTanh, kExp, kLog, kSqrt, kReciprocal, kNeg, kAbs, kErf, kFloor, kCeil, kRound,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh, kSoftplus, kSoftsign, kSign,
  kHardSigmoid,  // max(0, min(1, alpha * x + beta))
  kHardSwish,    // x * max(0, min(1, x / 6 + 1 / 2))
  kLeakyRelu,    // x < 0 ? alpha * x : x
  kElu,          // x < 0 ? alpha * (exp(x) - 1) : x
  kSelu,         // gamma(beta) * (x <= 0 ? alpha * (exp(x) - 1) : x)
  kCelu,         // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  kThresholdedRelu,  // x > alpha ? x : 0
  kGelu,         // x * (1 + erf(x / sqrt 2)) / 2
  kGeluTanh,     // x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2 (FastGelu, Gelu approximate=tanh)
  kQuickGelu,    // x * sigmoid(alpha * x)
  kMish,         // x * tanh(softplus(x))
  kNot,          // bool
  kIsNaN,        // -> bool
  kIsInf,        // -> bool; alpha != 0: detect +inf, beta != 0: detect -inf
  kScale,        // alpha * x
};

struct UnaryParams {
  UnaryOp op = UnaryOp::kIdentity;
  float alpha = 0.f, beta = 0.f;
};

// y[i] = op(x[i] (+ addend at its broadcast offset)). dtype: float, float16,
// double; integers for kIdentity, kNeg, kAbs, kRelu, kSign; bool for kNot.
// kIsNaN / kIsInf write bool. `addend` may be null.
cudaError_t launch_unary(const UnaryParams& p, int32_t dtype, const void* x, const void* addend,
                         const StridedMap& addend_map, void* y, int64_t n, cudaStream_t stream);

enum class BinaryOp : int {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kMod, kFmod, kPRelu,  // same type out
  kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual,          // bool out
  kAnd, kOr, kXor,                                                  // bool in and out
  kBitShiftLeft, kBitShiftRight,                                   // unsigned integers
};

// Whether the op writes bool whatever its inputs.
inline bool binary_writes_bool(BinaryOp op) { return op >= BinaryOp::kEqual && op <= BinaryOp::kXor; }

// y[i] = op(a[offset_a(i)], b[offset_b(i)]) over n output elements. A map
// with rank 0 reads the operand as contiguous and the same shape as y.
// dtype (of a and b): float, float16, double, int32, int64, int8, uint8
// (arithmetic and comparisons); bool (kAnd, kOr, kXor, kEqual); uint8..uint64
// for the shifts.
cudaError_t launch_binary(BinaryOp op, int32_t dtype, const void* a, const StridedMap& a_map, const void* b,
                          const StridedMap& b_map, void* y, int64_t n, cudaStream_t stream);

// y[i] = cond[i] ? x[i] : z[i], each broadcast by its map (rank 0:
// contiguous). Elements are copied by size (1, 2, 4 or 8 bytes).
cudaError_t launch_where(const bool* cond, const StridedMap& cond_map, const void* x, const StridedMap& x_map,
                         const void* z, const StridedMap& z_map, size_t element_bytes, void* y, int64_t n,
                         cudaStream_t stream);

// y[i] = min(max(x[i], lo), hi) (NaN stays NaN). dtype: float types,
// int32, int64, int8, uint8; lo and hi are converted to it.
cudaError_t launch_clip(int32_t dtype, const void* x, double lo, double hi, void* y, int64_t n, cudaStream_t stream);

// y[i] = (to) x[i]: numeric types, float16 and bool (nonzero -> true; true
// -> 1). Float to integer truncates toward zero, as C++ casts do.
cudaError_t launch_cast(int32_t from, const void* x, int32_t to, void* y, int64_t n, cudaStream_t stream);

}  // namespace loom::cuda
