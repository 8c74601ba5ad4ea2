// Element-wise kernels: grid-stride loops, one thread per output element,
// the op chosen by a switch that every thread of a launch takes the same
// way. float16 computes in float.
#include <limits>
#include <type_traits>

#include "kernels/device_math.cuh"
#include "kernels/device_types.cuh"
#include "kernels/elementwise.h"

namespace loom::cuda {
namespace {

template <class A>
__device__ __forceinline__ A sigmoid(A x) {
  return A(1) / (A(1) + dm::exp(-x));
}

template <class A>
__device__ __forceinline__ A softplus(A x) {
  // log(1 + e^x) without overflow for large x.
  return x > A(0) ? x + dm::log1p(dm::exp(-x)) : dm::log1p(dm::exp(x));
}

template <class A>
__device__ A unary_value(const UnaryParams& p, A x) {
  const A alpha = static_cast<A>(p.alpha), beta = static_cast<A>(p.beta);
  switch (p.op) {
    case UnaryOp::kIdentity: return x;
    case UnaryOp::kRelu: return x > A(0) ? x : A(0);
    case UnaryOp::kSigmoid: return sigmoid(x);
    case UnaryOp::kTanh: return dm::tanh(x);
    case UnaryOp::kExp: return dm::exp(x);
    case UnaryOp::kLog: return dm::log(x);
    case UnaryOp::kSqrt: return dm::sqrt(x);
    case UnaryOp::kReciprocal: return A(1) / x;
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return dm::fabs(x);
    case UnaryOp::kErf: return dm::erf(x);
    case UnaryOp::kFloor: return dm::floor(x);
    case UnaryOp::kCeil: return dm::ceil(x);
    case UnaryOp::kRound: return dm::rint(x);  // half to even, as ONNX Round
    case UnaryOp::kSin: return dm::sin(x);
    case UnaryOp::kCos: return dm::cos(x);
    case UnaryOp::kTan: return dm::tan(x);
    case UnaryOp::kAsin: return dm::asin(x);
    case UnaryOp::kAcos: return dm::acos(x);
    case UnaryOp::kAtan: return dm::atan(x);
    case UnaryOp::kSinh: return dm::sinh(x);
    case UnaryOp::kCosh: return dm::cosh(x);
    case UnaryOp::kAsinh: return dm::asinh(x);
    case UnaryOp::kAcosh: return dm::acosh(x);
    case UnaryOp::kAtanh: return dm::atanh(x);
    case UnaryOp::kSoftplus: return softplus(x);
    case UnaryOp::kSoftsign: return x / (A(1) + dm::fabs(x));
    case UnaryOp::kSign: return x > A(0) ? A(1) : x < A(0) ? A(-1) : A(0);
    case UnaryOp::kHardSigmoid: {
      const A v = alpha * x + beta;
      return v < A(0) ? A(0) : v > A(1) ? A(1) : v;
    }
    case UnaryOp::kHardSwish: {
      const A v = x / A(6) + A(0.5);
      return x * (v < A(0) ? A(0) : v > A(1) ? A(1) : v);
    }
    case UnaryOp::kLeakyRelu: return x < A(0) ? alpha * x : x;
    case UnaryOp::kElu: return x < A(0) ? alpha * dm::expm1(x) : x;
    case UnaryOp::kSelu: return beta * (x <= A(0) ? alpha * dm::expm1(x) : x);
    case UnaryOp::kCelu: {
      const A neg = alpha * dm::expm1(x / alpha);
      return (x > A(0) ? x : A(0)) + (neg < A(0) ? neg : A(0));
    }
    case UnaryOp::kThresholdedRelu: return x > alpha ? x : A(0);
    case UnaryOp::kGelu: return x * (A(1) + dm::erf(x * A(0.70710678118654752440))) * A(0.5);
    case UnaryOp::kGeluTanh: {
      const A inner = A(0.79788456080286535588) * (x + A(0.044715) * x * x * x);
      return x * (A(1) + dm::tanh(inner)) * A(0.5);
    }
    case UnaryOp::kQuickGelu: return x * sigmoid(alpha * x);
    case UnaryOp::kMish: return x * dm::tanh(softplus(x));
    case UnaryOp::kScale: return alpha * x;
    default: return x;
  }
}

template <class T>
__global__ void unary_float_kernel(UnaryParams p, const T* x, const T* addend, StridedMap map, T* y, int64_t n) {
  using A = typename Acc<T>::type;
  LOOM_GRID_STRIDE_LOOP(i, n) {
    A v = to_acc(x[i]);
    if (addend != nullptr) v += to_acc(addend[map.rank == 0 ? i : map.offset(i)]);
    y[i] = from_acc<T>(unary_value<A>(p, v));
  }
}

template <class T>
__global__ void unary_int_kernel(UnaryOp op, const T* x, T* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const T v = x[i];
    switch (op) {
      case UnaryOp::kNeg: y[i] = static_cast<T>(-v); break;
      case UnaryOp::kAbs: y[i] = v < T(0) ? static_cast<T>(-v) : v; break;
      case UnaryOp::kRelu: y[i] = v > T(0) ? v : T(0); break;
      case UnaryOp::kSign: y[i] = v > T(0) ? T(1) : v < T(0) ? static_cast<T>(-1) : T(0); break;
      default: y[i] = v; break;
    }
  }
}

__global__ void not_kernel(const bool* x, bool* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) y[i] = !x[i];
}

template <class T>
__global__ void classify_kernel(UnaryParams p, const T* x, bool* y, int64_t n) {
  using A = typename Acc<T>::type;
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const A v = to_acc(x[i]);
    if (p.op == UnaryOp::kIsNaN) y[i] = dm::isnan(v);
    else y[i] = dm::isinf(v) && ((v > A(0) && p.alpha != 0.f) || (v < A(0) && p.beta != 0.f));
  }
}

template <class T>
cudaError_t unary_int(UnaryOp op, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (op != UnaryOp::kIdentity && op != UnaryOp::kNeg && op != UnaryOp::kAbs && op != UnaryOp::kRelu &&
      op != UnaryOp::kSign)
    return cudaErrorInvalidValue;
  unary_int_kernel<T><<<grid_for(n), kBlockThreads, 0, s>>>(op, static_cast<const T*>(x), static_cast<T*>(y), n);
  return cudaGetLastError();
}

// --- binary ---

template <class T>
__device__ __forceinline__ T int_mod(T a, T b) {
  // ONNX Mod with fmod = 0: the result takes the divisor's sign.
  T r = b == T(0) ? T(0) : static_cast<T>(a % b);
  if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
  return r;
}

template <class T, bool kFloat>
__device__ __forceinline__ typename Acc<T>::type arith(BinaryOp op, typename Acc<T>::type a,
                                                       typename Acc<T>::type b) {
  using A = typename Acc<T>::type;
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv:
      if constexpr (kFloat) return a / b;
      else return b == A(0) ? A(0) : static_cast<A>(a / b);
    case BinaryOp::kMax:
      if constexpr (kFloat) return (a != a || a > b) ? a : b;  // NaN propagates
      else return a > b ? a : b;
    case BinaryOp::kMin:
      if constexpr (kFloat) return (a != a || a < b) ? a : b;
      else return a < b ? a : b;
    case BinaryOp::kPow:
      if constexpr (kFloat) return dm::pow(a, b);
      else return A(0);
    case BinaryOp::kFmod:
      if constexpr (kFloat) return dm::fmod(a, b);
      else return b == A(0) ? A(0) : static_cast<A>(a % b);
    case BinaryOp::kMod:
      if constexpr (kFloat) {
        A r = dm::fmod(a, b);
        if (r != A(0) && ((r < A(0)) != (b < A(0)))) r += b;
        return r;
      } else {
        return int_mod<A>(a, b);
      }
    case BinaryOp::kPRelu: return a < A(0) ? a * b : a;
    default: return A(0);
  }
}

template <class T>
__device__ __forceinline__ bool compare(BinaryOp op, typename Acc<T>::type a, typename Acc<T>::type b) {
  switch (op) {
    case BinaryOp::kEqual: return a == b;
    case BinaryOp::kLess: return a < b;
    case BinaryOp::kGreater: return a > b;
    case BinaryOp::kLessOrEqual: return a <= b;
    case BinaryOp::kGreaterOrEqual: return a >= b;
    default: return false;
  }
}

template <class T, class Out, bool kFloat>
__global__ void binary_kernel(BinaryOp op, const T* a, StridedMap am, const T* b, StridedMap bm, Out* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const auto va = to_acc(a[am.rank == 0 ? i : am.offset(i)]);
    const auto vb = to_acc(b[bm.rank == 0 ? i : bm.offset(i)]);
    if constexpr (std::is_same<Out, bool>::value) y[i] = compare<T>(op, va, vb);
    else y[i] = from_acc<T>(arith<T, kFloat>(op, va, vb));
  }
}

__global__ void logical_kernel(BinaryOp op, const bool* a, StridedMap am, const bool* b, StridedMap bm, bool* y,
                               int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const bool va = a[am.rank == 0 ? i : am.offset(i)], vb = b[bm.rank == 0 ? i : bm.offset(i)];
    switch (op) {
      case BinaryOp::kAnd: y[i] = va && vb; break;
      case BinaryOp::kOr: y[i] = va || vb; break;
      case BinaryOp::kXor: y[i] = va != vb; break;
      default: y[i] = va == vb; break;  // kEqual
    }
  }
}

template <class T>
__global__ void shift_kernel(bool left, const T* a, StridedMap am, const T* b, StridedMap bm, T* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const T va = a[am.rank == 0 ? i : am.offset(i)], vb = b[bm.rank == 0 ? i : bm.offset(i)];
    const T width = static_cast<T>(sizeof(T) * 8);
    y[i] = vb >= width ? T(0) : left ? static_cast<T>(va << vb) : static_cast<T>(va >> vb);
  }
}

template <class T, bool kFloat>
cudaError_t binary_typed(BinaryOp op, const void* a, const StridedMap& am, const void* b, const StridedMap& bm,
                         void* y, int64_t n, cudaStream_t s) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  if (binary_writes_bool(op)) {
    if (op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kXor) return cudaErrorInvalidValue;
    binary_kernel<T, bool, kFloat><<<grid_for(n), kBlockThreads, 0, s>>>(op, pa, am, pb, bm, static_cast<bool*>(y), n);
  } else {
    if (!kFloat && (op == BinaryOp::kPow)) return cudaErrorInvalidValue;
    if (op == BinaryOp::kBitShiftLeft || op == BinaryOp::kBitShiftRight) return cudaErrorInvalidValue;
    binary_kernel<T, T, kFloat><<<grid_for(n), kBlockThreads, 0, s>>>(op, pa, am, pb, bm, static_cast<T*>(y), n);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t shift_typed(BinaryOp op, const void* a, const StridedMap& am, const void* b, const StridedMap& bm,
                        void* y, int64_t n, cudaStream_t s) {
  shift_kernel<T><<<grid_for(n), kBlockThreads, 0, s>>>(op == BinaryOp::kBitShiftLeft, static_cast<const T*>(a), am,
                                                        static_cast<const T*>(b), bm, static_cast<T*>(y), n);
  return cudaGetLastError();
}

// --- where, clip, cast ---

template <class U>
__global__ void where_kernel(const bool* c, StridedMap cm, const U* x, StridedMap xm, const U* z, StridedMap zm, U* y,
                             int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    y[i] = c[cm.rank == 0 ? i : cm.offset(i)] ? x[xm.rank == 0 ? i : xm.offset(i)] : z[zm.rank == 0 ? i : zm.offset(i)];
  }
}

template <class T>
__global__ void clip_kernel(const T* x, typename Acc<T>::type lo, typename Acc<T>::type hi, T* y, int64_t n) {
  using A = typename Acc<T>::type;
  LOOM_GRID_STRIDE_LOOP(i, n) {
    A v = to_acc(x[i]);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    y[i] = from_acc<T>(v);
  }
}

template <class T>
__device__ __forceinline__ double as_double(T v) { return static_cast<double>(v); }
template <>
__device__ __forceinline__ double as_double<__half>(__half v) { return static_cast<double>(__half2float(v)); }

template <class To>
__device__ __forceinline__ To from_double(double v) { return static_cast<To>(v); }
template <>
__device__ __forceinline__ __half from_double<__half>(double v) { return __double2half(v); }
template <>
__device__ __forceinline__ bool from_double<bool>(double v) { return v != 0.0; }

template <class From, class To>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same<From, To>::value) return v;
  // Integers to integers directly (doubles lose int64 precision).
  else if constexpr (std::is_integral<From>::value && std::is_integral<To>::value && !std::is_same<To, bool>::value)
    return static_cast<To>(v);
  else if constexpr (std::is_integral<From>::value && std::is_same<To, bool>::value) return v != From(0);
  else return from_double<To>(as_double(v));
}

template <class From, class To>
__global__ void cast_kernel(const From* x, To* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) y[i] = convert<From, To>(x[i]);
}

template <class F>
bool dispatch_cast_type(int32_t dtype, F&& f) {
  if (dtype == LOOM_DTYPE_BOOL) {
    f(bool{});
    return true;
  }
  return dispatch_numeric(dtype, f);
}

}  // namespace

cudaError_t launch_unary(const UnaryParams& p, int32_t dtype, const void* x, const void* addend,
                         const StridedMap& addend_map, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (p.op == UnaryOp::kNot) {
    if (dtype != LOOM_DTYPE_BOOL) return cudaErrorInvalidValue;
    not_kernel<<<grid_for(n), kBlockThreads, 0, s>>>(static_cast<const bool*>(x), static_cast<bool*>(y), n);
    return cudaGetLastError();
  }
  if (p.op == UnaryOp::kIsNaN || p.op == UnaryOp::kIsInf) {
    cudaError_t e = cudaErrorInvalidValue;
    dispatch_float(dtype, [&](auto tag) {
      using T = decltype(tag);
      classify_kernel<T><<<grid_for(n), kBlockThreads, 0, s>>>(p, static_cast<const T*>(x), static_cast<bool*>(y), n);
      e = cudaGetLastError();
    });
    return e;
  }
  cudaError_t e = cudaErrorInvalidValue;
  const bool is_float = dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    unary_float_kernel<T><<<grid_for(n), kBlockThreads, 0, s>>>(p, static_cast<const T*>(x),
                                                                static_cast<const T*>(addend), addend_map,
                                                                static_cast<T*>(y), n);
    e = cudaGetLastError();
  });
  if (is_float) return e;
  if (addend != nullptr) return cudaErrorInvalidValue;
  switch (dtype) {
    case LOOM_DTYPE_INT32: return unary_int<int32_t>(p.op, x, y, n, s);
    case LOOM_DTYPE_INT64: return unary_int<int64_t>(p.op, x, y, n, s);
    case LOOM_DTYPE_INT8: return unary_int<int8_t>(p.op, x, y, n, s);
    case LOOM_DTYPE_UINT8: return unary_int<uint8_t>(p.op, x, y, n, s);
    case LOOM_DTYPE_BOOL: return p.op == UnaryOp::kIdentity ? unary_int<uint8_t>(p.op, x, y, n, s)
                                                            : cudaErrorInvalidValue;
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_binary(BinaryOp op, int32_t dtype, const void* a, const StridedMap& am, const void* b,
                          const StridedMap& bm, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (op == BinaryOp::kBitShiftLeft || op == BinaryOp::kBitShiftRight) {
    switch (dtype) {
      case LOOM_DTYPE_UINT8: return shift_typed<uint8_t>(op, a, am, b, bm, y, n, s);
      case LOOM_DTYPE_UINT16: return shift_typed<uint16_t>(op, a, am, b, bm, y, n, s);
      case LOOM_DTYPE_UINT32: return shift_typed<uint32_t>(op, a, am, b, bm, y, n, s);
      case LOOM_DTYPE_UINT64: return shift_typed<uint64_t>(op, a, am, b, bm, y, n, s);
      default: return cudaErrorInvalidValue;
    }
  }
  if (dtype == LOOM_DTYPE_BOOL) {
    if (op != BinaryOp::kAnd && op != BinaryOp::kOr && op != BinaryOp::kXor && op != BinaryOp::kEqual)
      return cudaErrorInvalidValue;
    logical_kernel<<<grid_for(n), kBlockThreads, 0, s>>>(op, static_cast<const bool*>(a), am,
                                                         static_cast<const bool*>(b), bm, static_cast<bool*>(y), n);
    return cudaGetLastError();
  }
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return binary_typed<float, true>(op, a, am, b, bm, y, n, s);
    case LOOM_DTYPE_FLOAT16: return binary_typed<__half, true>(op, a, am, b, bm, y, n, s);
    case LOOM_DTYPE_DOUBLE: return binary_typed<double, true>(op, a, am, b, bm, y, n, s);
    case LOOM_DTYPE_INT32: return binary_typed<int32_t, false>(op, a, am, b, bm, y, n, s);
    case LOOM_DTYPE_INT64: return binary_typed<int64_t, false>(op, a, am, b, bm, y, n, s);
    case LOOM_DTYPE_INT8: return binary_typed<int8_t, false>(op, a, am, b, bm, y, n, s);
    case LOOM_DTYPE_UINT8: return binary_typed<uint8_t, false>(op, a, am, b, bm, y, n, s);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_where(const bool* c, const StridedMap& cm, const void* x, const StridedMap& xm, const void* z,
                         const StridedMap& zm, size_t element_bytes, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  cudaError_t e = cudaErrorInvalidValue;
  dispatch_by_size(element_bytes, [&](auto tag) {
    using U = decltype(tag);
    where_kernel<U><<<grid_for(n), kBlockThreads, 0, s>>>(c, cm, static_cast<const U*>(x), xm,
                                                          static_cast<const U*>(z), zm, static_cast<U*>(y), n);
    e = cudaGetLastError();
  });
  return e;
}

cudaError_t launch_clip(int32_t dtype, const void* x, double lo, double hi, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  cudaError_t e = cudaErrorInvalidValue;
  dispatch_numeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = typename Acc<T>::type;
    // Bounds past the type's range clamp to it (an int8 Clip to +-1e9 is no clip).
    const double lo_t = lo < static_cast<double>(std::numeric_limits<A>::lowest())
                            ? static_cast<double>(std::numeric_limits<A>::lowest()) : lo;
    const double hi_t = hi > static_cast<double>(std::numeric_limits<A>::max())
                            ? static_cast<double>(std::numeric_limits<A>::max()) : hi;
    clip_kernel<T><<<grid_for(n), kBlockThreads, 0, s>>>(static_cast<const T*>(x), static_cast<A>(lo_t),
                                                         static_cast<A>(hi_t), static_cast<T*>(y), n);
    e = cudaGetLastError();
  });
  return e;
}

cudaError_t launch_cast(int32_t from, const void* x, int32_t to, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  cudaError_t e = cudaErrorInvalidValue;
  dispatch_cast_type(from, [&](auto from_tag) {
    using F = decltype(from_tag);
    dispatch_cast_type(to, [&](auto to_tag) {
      using T = decltype(to_tag);
      cast_kernel<F, T><<<grid_for(n), kBlockThreads, 0, s>>>(static_cast<const F*>(x), static_cast<T*>(y), n);
      e = cudaGetLastError();
    });
  });
  return e;
}

}  // namespace loom::cuda
