// ReduceX and ArgMax / ArgMin kernels. Each output is either one block (a
// tree reduction, when it reduces many elements and there are few outputs
// or its elements are contiguous) or one thread (a serial loop; adjacent
// threads read adjacent elements when the reduced axes lead). The op is a
// runtime switch every thread takes the same way.
#include "kernels/reduce.h"
#include "kernels/reduce_device.cuh"

namespace loom::cuda {
namespace {

constexpr int kReduceThreads = 256;

// The element-wise part of a reduction in accumulator type A: the value
// each element contributes, how two partial results combine, the start.
template <class A>
struct ReduceStep {
  ReduceOp op;

  __device__ A identity() const {
    switch (op) {
      case ReduceOp::kProd: return A(1);
      case ReduceOp::kMax: return minus_infinity<A>();
      case ReduceOp::kMin: return plus_infinity<A>();
      default: return A(0);
    }
  }
  __device__ A prepare(A v) const {
    switch (op) {
      case ReduceOp::kL1: return v < A(0) ? static_cast<A>(-v) : v;
      case ReduceOp::kL2:
      case ReduceOp::kSumSquare: return v * v;
      default: return v;
    }
  }
  __device__ A operator()(A a, A b) const {
    switch (op) {
      case ReduceOp::kProd: return a * b;
      case ReduceOp::kMax:
        if (is_nan_acc(a) || is_nan_acc(b)) return is_nan_acc(a) ? a : b;
        return a < b ? b : a;
      case ReduceOp::kMin:
        if (is_nan_acc(a) || is_nan_acc(b)) return is_nan_acc(a) ? a : b;
        return b < a ? b : a;
      default: return a + b;
    }
  }
};

// The result from the combined value of `count` elements.
template <class A>
__device__ A finish(ReduceOp op, A acc, int64_t count) {
  if constexpr (std::is_floating_point_v<A>) {
    switch (op) {
      case ReduceOp::kMean: return count == 0 ? quiet_nan<A>() : acc / static_cast<A>(count);
      case ReduceOp::kL2: return dm::sqrt(acc);
      case ReduceOp::kLogSum: return dm::log(acc);
      default: return acc;
    }
  } else {
    if (op == ReduceOp::kMean) return count == 0 ? A(0) : static_cast<A>(acc / count);
    return acc;
  }
}

// log(sum(exp(v))) from the maximum m and sum(exp(v - m)) (sum(exp(v)) when
// m is infinite: no elements, all -inf, or +inf among them).
template <class A>
__device__ A log_sum_exp(A m, A shifted_sum) {
  return dm::isinf(m) ? dm::log(shifted_sum) : dm::log(shifted_sum) + m;
}
template <class A>
__device__ A exp_shifted(A v, A m) {
  return dm::isinf(m) ? dm::exp(v) : dm::exp(v - m);
}

template <class T>
__global__ void reduce_thread_kernel(ReduceOp op, const T* x, T* y, ReduceMaps m) {
  using A = red_acc_t<T>;
  const ReduceStep<A> step{op};
  const bool contiguous = m.contiguous();
  LOOM_GRID_STRIDE_LOOP(o, m.outputs) {
    const T* base = x + m.kept.offset(o);
    auto at = [&](int64_t j) { return load_acc(base, contiguous ? j : m.reduced.offset(j)); };
    if constexpr (std::is_floating_point_v<A>) {
      if (op == ReduceOp::kLogSumExp) {
        A mx = minus_infinity<A>(), sum = A(0);
        for (int64_t j = 0; j < m.count; ++j) mx = MaxIgnoringNanOp()(mx, at(j));
        for (int64_t j = 0; j < m.count; ++j) sum += exp_shifted(at(j), mx);
        y[o] = store_as<T>(log_sum_exp(mx, sum));
        continue;
      }
    }
    A acc = step.identity();
    for (int64_t j = 0; j < m.count; ++j) acc = step(acc, step.prepare(at(j)));
    y[o] = store_as<T>(finish(op, acc, m.count));
  }
}

template <class T>
__global__ void __launch_bounds__(kReduceThreads) reduce_block_kernel(ReduceOp op, const T* x, T* y, ReduceMaps m) {
  using A = red_acc_t<T>;
  const ReduceStep<A> step{op};
  const bool contiguous = m.contiguous();
  for (int64_t o = blockIdx.x; o < m.outputs; o += gridDim.x) {
    const T* base = x + m.kept.offset(o);
    auto at = [&](int64_t j) { return load_acc(base, contiguous ? j : m.reduced.offset(j)); };
    if constexpr (std::is_floating_point_v<A>) {
      if (op == ReduceOp::kLogSumExp) {
        A mx = minus_infinity<A>(), sum = A(0);
        for (int64_t j = threadIdx.x; j < m.count; j += blockDim.x) mx = MaxIgnoringNanOp()(mx, at(j));
        mx = block_all_reduce<kReduceThreads>(mx, MaxIgnoringNanOp());
        for (int64_t j = threadIdx.x; j < m.count; j += blockDim.x) sum += exp_shifted(at(j), mx);
        sum = block_all_reduce<kReduceThreads>(sum, SumOp());
        if (threadIdx.x == 0) y[o] = store_as<T>(log_sum_exp(mx, sum));
        continue;
      }
    }
    A acc = step.identity();
    for (int64_t j = threadIdx.x; j < m.count; j += blockDim.x) acc = step(acc, step.prepare(at(j)));
    acc = block_all_reduce<kReduceThreads>(acc, step);
    if (threadIdx.x == 0) y[o] = store_as<T>(finish(op, acc, m.count));
  }
}

// A block per output when it has many elements and either they are
// contiguous (coalesced) or there are too few outputs to fill the GPU with
// one thread each.
bool block_per_output(int64_t outputs, int64_t count, bool contiguous) {
  if (count >= 128 && contiguous) return true;
  return count >= 512 && outputs <= 4096;
}

template <class T>
cudaError_t reduce_typed(ReduceOp op, const void* x, void* y, const ReduceMaps& m, cudaStream_t s) {
  if (m.outputs == 0) return cudaSuccess;
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  if (block_per_output(m.outputs, m.count, m.contiguous()))
    reduce_block_kernel<T><<<blocks_for_items(m.outputs), kReduceThreads, 0, s>>>(op, px, py, m);
  else
    reduce_thread_kernel<T><<<grid_for(m.outputs), kBlockThreads, 0, s>>>(op, px, py, m);
  return cudaGetLastError();
}

// --- ArgMax / ArgMin ---

// The best element so far and its index (-1: none yet).
template <class A>
struct ArgBest {
  A v;
  int64_t i;
};

// Combines two candidates: a NaN beats a number; otherwise the larger
// (is_max) or smaller value; ties (and two NaNs) go to the lower index, or
// the higher with `last`. Associative, so serial and tree orders agree.
struct ArgPick {
  bool is_max, last;
  template <class A>
  __device__ ArgBest<A> operator()(const ArgBest<A>& a, const ArgBest<A>& b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = is_nan_acc(a.v), bn = is_nan_acc(b.v);
    bool take_b;
    if (an != bn) take_b = bn;
    else if (!an && a.v != b.v) take_b = is_max ? b.v > a.v : b.v < a.v;
    else take_b = last ? b.i > a.i : b.i < a.i;
    return take_b ? b : a;
  }
};

template <class T>
__global__ void arg_thread_kernel(ArgPick pick, const T* x, int64_t* y, AxisRows rows) {
  using A = red_acc_t<T>;
  LOOM_GRID_STRIDE_LOOP(r, rows.rows()) {
    const int64_t base = rows.base(r);
    ArgBest<A> best{load_acc(x, base), 0};
    for (int64_t k = 1; k < rows.n; ++k) best = pick(best, ArgBest<A>{load_acc(x, base + k * rows.inner), k});
    y[r] = best.i;
  }
}

template <class T>
__global__ void __launch_bounds__(kReduceThreads) arg_block_kernel(ArgPick pick, const T* x, int64_t* y, AxisRows rows) {
  using A = red_acc_t<T>;
  using Reduce = cub::BlockReduce<ArgBest<A>, kReduceThreads>;
  __shared__ typename Reduce::TempStorage storage;
  for (int64_t r = blockIdx.x; r < rows.rows(); r += gridDim.x) {
    const int64_t base = rows.base(r);
    ArgBest<A> best{A(0), -1};
    for (int64_t k = threadIdx.x; k < rows.n; k += blockDim.x)
      best = pick(best, ArgBest<A>{load_acc(x, base + k * rows.inner), k});
    best = Reduce(storage).Reduce(best, pick);
    if (threadIdx.x == 0) y[r] = best.i;
    __syncthreads();  // storage is reused by the next row
  }
}

template <class T>
cudaError_t arg_typed(ArgPick pick, const void* x, int64_t* y, const AxisRows& rows, cudaStream_t s) {
  const int64_t n_rows = rows.rows();
  if (n_rows == 0) return cudaSuccess;
  if (rows.n < 1) return cudaErrorInvalidValue;
  const T* px = static_cast<const T*>(x);
  if (block_per_output(n_rows, rows.n, rows.inner == 1))
    arg_block_kernel<T><<<blocks_for_items(n_rows), kReduceThreads, 0, s>>>(pick, px, y, rows);
  else
    arg_thread_kernel<T><<<grid_for(n_rows), kBlockThreads, 0, s>>>(pick, px, y, rows);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_reduce(ReduceOp op, int32_t dtype, const void* x, void* y, const ReduceMaps& maps,
                          cudaStream_t stream) {
  const bool ints = reduce_op_takes_integers(op);
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return reduce_typed<float>(op, x, y, maps, stream);
    case LOOM_DTYPE_FLOAT16: return reduce_typed<__half>(op, x, y, maps, stream);
    case LOOM_DTYPE_DOUBLE: return reduce_typed<double>(op, x, y, maps, stream);
    case LOOM_DTYPE_INT32: return ints ? reduce_typed<int32_t>(op, x, y, maps, stream) : cudaErrorInvalidValue;
    case LOOM_DTYPE_INT64: return ints ? reduce_typed<int64_t>(op, x, y, maps, stream) : cudaErrorInvalidValue;
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_arg_reduce(bool is_max, bool select_last, int32_t dtype, const void* x, int64_t* y,
                              const AxisRows& rows, cudaStream_t stream) {
  const ArgPick pick{is_max, select_last};
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return arg_typed<float>(pick, x, y, rows, stream);
    case LOOM_DTYPE_FLOAT16: return arg_typed<__half>(pick, x, y, rows, stream);
    case LOOM_DTYPE_DOUBLE: return arg_typed<double>(pick, x, y, rows, stream);
    case LOOM_DTYPE_INT32: return arg_typed<int32_t>(pick, x, y, rows, stream);
    case LOOM_DTYPE_INT64: return arg_typed<int64_t>(pick, x, y, rows, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace loom::cuda
