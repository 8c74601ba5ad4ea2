// Float and double overloads of the device math functions the element-wise
// and normalisation kernels use, so templates on the arithmetic type call
// the right precision. Included by .cu files only.
#pragma once

#include <cuda_runtime.h>

namespace loom::cuda::dm {

#define LOOM_DM_UNARY(name, ffn, dfn)                                  \
  __device__ __forceinline__ float name(float x) { return ffn(x); }   \
  __device__ __forceinline__ double name(double x) { return dfn(x); }

LOOM_DM_UNARY(exp, expf, ::exp)
LOOM_DM_UNARY(log, logf, ::log)
LOOM_DM_UNARY(log1p, log1pf, ::log1p)
LOOM_DM_UNARY(expm1, expm1f, ::expm1)
LOOM_DM_UNARY(sqrt, sqrtf, ::sqrt)
LOOM_DM_UNARY(tanh, tanhf, ::tanh)
LOOM_DM_UNARY(erf, erff, ::erf)
LOOM_DM_UNARY(floor, floorf, ::floor)
LOOM_DM_UNARY(ceil, ceilf, ::ceil)
LOOM_DM_UNARY(rint, rintf, ::rint)
LOOM_DM_UNARY(sin, sinf, ::sin)
LOOM_DM_UNARY(cos, cosf, ::cos)
LOOM_DM_UNARY(tan, tanf, ::tan)
LOOM_DM_UNARY(asin, asinf, ::asin)
LOOM_DM_UNARY(acos, acosf, ::acos)
LOOM_DM_UNARY(atan, atanf, ::atan)
LOOM_DM_UNARY(sinh, sinhf, ::sinh)
LOOM_DM_UNARY(cosh, coshf, ::cosh)
LOOM_DM_UNARY(asinh, asinhf, ::asinh)
LOOM_DM_UNARY(acosh, acoshf, ::acosh)
LOOM_DM_UNARY(atanh, atanhf, ::atanh)
LOOM_DM_UNARY(fabs, fabsf, ::fabs)
#undef LOOM_DM_UNARY

__device__ __forceinline__ float pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double pow(double a, double b) { return ::pow(a, b); }
__device__ __forceinline__ float fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double fmod(double a, double b) { return ::fmod(a, b); }
__device__ __forceinline__ bool isnan(float x) { return ::isnan(x); }
__device__ __forceinline__ bool isnan(double x) { return ::isnan(x); }
__device__ __forceinline__ bool isinf(float x) { return ::isinf(x); }
__device__ __forceinline__ bool isinf(double x) { return ::isinf(x); }

}  // namespace loom::cuda::dm
