// TopK kernels. Rows up to kTopkBitonicMax long: one block per row sorts
// (value, index) pairs in shared memory with a bitonic network under the
// topk_before order (padded to a power of two with entries that rank
// last). Longer rows: every row's elements become unsigned keys whose
// ascending order is the rank order, sorted by a stable segmented radix
// sort (equal keys keep their index order), and the first k are gathered.
#include <cub/device/device_segmented_radix_sort.cuh>

#include "kernels/reduce_device.cuh"
#include "kernels/topk.h"

namespace loom::cuda {
namespace {

template <class T>
__global__ void topk_bitonic_kernel(bool largest, const T* x, T* values, int64_t* indices, AxisRows rows, int64_t k,
                                    int64_t padded) {
  using A = red_acc_t<T>;
  extern __shared__ __align__(16) unsigned char topk_shared[];
  A* keys = reinterpret_cast<A*>(topk_shared);
  int* idx = reinterpret_cast<int*>(keys + padded);
  const AxisRows out_rows{rows.outer, k, rows.inner};
  for (int64_t r = blockIdx.x; r < rows.rows(); r += gridDim.x) {
    for (int64_t t = threadIdx.x; t < padded; t += blockDim.x) {
      idx[t] = static_cast<int>(t);
      keys[t] = t < rows.n ? load_acc(x, rows.at(r, t)) : A(0);
    }
    __syncthreads();
    for (int64_t size = 2; size <= padded; size <<= 1) {
      for (int64_t stride = size / 2; stride > 0; stride >>= 1) {
        for (int64_t t = threadIdx.x; t < padded / 2; t += blockDim.x) {
          const int64_t i = bitonic_first(t, stride), j = i + stride;
          if (topk_before(keys[j], idx[j], keys[i], idx[i], largest, rows.n) == bitonic_ascending(i, size)) {
            const A kv = keys[i];
            keys[i] = keys[j];
            keys[j] = kv;
            const int iv = idx[i];
            idx[i] = idx[j];
            idx[j] = iv;
          }
        }
        __syncthreads();
      }
    }
    for (int64_t j = threadIdx.x; j < k; j += blockDim.x) {
      const int64_t src = idx[j];
      values[out_rows.at(r, j)] = x[rows.at(r, src)];
      if (indices != nullptr) indices[out_rows.at(r, j)] = src;
    }
    __syncthreads();  // the arrays are refilled for the next row
  }
}

// Radix keys (see reduce_plan.h): 32 bits for float, float16 and int32,
// 64 bits for double and int64.
template <class T> struct KeyOf { using type = uint32_t; };
template <> struct KeyOf<double> { using type = uint64_t; };
template <> struct KeyOf<int64_t> { using type = uint64_t; };

__device__ __forceinline__ uint32_t radix_key(float v, bool largest) {
  return topk_key32(ordered_float_bits(__float_as_uint(v)), largest);
}
__device__ __forceinline__ uint32_t radix_key(__half v, bool largest) { return radix_key(__half2float(v), largest); }
__device__ __forceinline__ uint32_t radix_key(int32_t v, bool largest) {
  return topk_key32(ordered_int32_bits(v), largest);
}
__device__ __forceinline__ uint64_t radix_key(double v, bool largest) {
  return topk_key64(ordered_double_bits(static_cast<uint64_t>(__double_as_longlong(v))), largest);
}
__device__ __forceinline__ uint64_t radix_key(int64_t v, bool largest) {
  return topk_key64(ordered_int64_bits(v), largest);
}

template <class T, class K>
__global__ void topk_keys_kernel(bool largest, const T* x, K* keys, int* positions, AxisRows rows) {
  LOOM_GRID_STRIDE_LOOP(e, rows.rows() * rows.n) {
    const int64_t r = e / rows.n, j = e % rows.n;
    keys[e] = radix_key(x[rows.at(r, j)], largest);
    positions[e] = static_cast<int>(j);
  }
}

__global__ void topk_offsets_kernel(int* offsets, int64_t segments, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(s, segments + 1) offsets[s] = static_cast<int>(s * n);
}

template <class T>
__global__ void topk_gather_kernel(const T* x, const int* sorted, T* values, int64_t* indices, AxisRows rows,
                                   int64_t k) {
  const AxisRows out_rows{rows.outer, k, rows.inner};
  LOOM_GRID_STRIDE_LOOP(e, rows.rows() * k) {
    const int64_t r = e / k, j = e % k;
    const int64_t src = sorted[r * rows.n + j];
    values[out_rows.at(r, j)] = x[rows.at(r, src)];
    if (indices != nullptr) indices[out_rows.at(r, j)] = src;
  }
}

constexpr size_t kAlign = 256;
size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Where the radix path's buffers live in its scratch.
template <class K>
struct RadixScratch {
  K *keys_in, *keys_out;
  int *pos_in, *pos_out, *offsets;
  void* temp;
  size_t temp_bytes, total_bytes;

  RadixScratch(void* base, size_t temp_bytes_, int64_t items, int64_t segments) : temp_bytes(temp_bytes_) {
    unsigned char* p = static_cast<unsigned char*>(base);
    size_t at = 0;
    auto take = [&](size_t bytes) {
      unsigned char* q = p == nullptr ? nullptr : p + at;
      at += aligned(bytes);
      return q;
    };
    keys_in = reinterpret_cast<K*>(take(sizeof(K) * items));
    keys_out = reinterpret_cast<K*>(take(sizeof(K) * items));
    pos_in = reinterpret_cast<int*>(take(sizeof(int) * items));
    pos_out = reinterpret_cast<int*>(take(sizeof(int) * items));
    offsets = reinterpret_cast<int*>(take(sizeof(int) * (segments + 1)));
    temp = take(temp_bytes);
    total_bytes = at;
  }
};

template <class K>
cudaError_t radix_temp_bytes(int64_t items, int64_t segments, size_t* bytes) {
  return cub::DeviceSegmentedRadixSort::SortPairs(nullptr, *bytes, static_cast<const K*>(nullptr),
                                                  static_cast<K*>(nullptr), static_cast<const int*>(nullptr),
                                                  static_cast<int*>(nullptr), static_cast<int>(items),
                                                  static_cast<int>(segments), static_cast<const int*>(nullptr),
                                                  static_cast<const int*>(nullptr) + 1);
}

template <class T>
cudaError_t topk_radix(bool largest, const T* x, T* values, int64_t* indices, const AxisRows& rows, int64_t k,
                       void* scratch, size_t scratch_bytes, cudaStream_t s) {
  using K = typename KeyOf<T>::type;
  const int64_t segments = rows.rows(), items = segments * rows.n;
  size_t temp_bytes = 0;
  cudaError_t e = radix_temp_bytes<K>(items, segments, &temp_bytes);
  if (e != cudaSuccess) return e;
  RadixScratch<K> b(scratch, temp_bytes, items, segments);
  if (scratch == nullptr || scratch_bytes < b.total_bytes) return cudaErrorInvalidValue;
  topk_keys_kernel<T, K><<<grid_for(items), kBlockThreads, 0, s>>>(largest, x, b.keys_in, b.pos_in, rows);
  topk_offsets_kernel<<<grid_for(segments + 1), kBlockThreads, 0, s>>>(b.offsets, segments, rows.n);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  e = cub::DeviceSegmentedRadixSort::SortPairs(b.temp, temp_bytes, b.keys_in, b.keys_out, b.pos_in, b.pos_out,
                                               static_cast<int>(items), static_cast<int>(segments), b.offsets,
                                               b.offsets + 1, 0, static_cast<int>(sizeof(K) * 8), s);
  if (e != cudaSuccess) return e;
  topk_gather_kernel<T><<<grid_for(segments * k), kBlockThreads, 0, s>>>(x, b.pos_out, values, indices, rows, k);
  return cudaGetLastError();
}

template <class T>
cudaError_t topk_typed(bool largest, const void* x, void* values, int64_t* indices, const AxisRows& rows, int64_t k,
                       void* scratch, size_t scratch_bytes, cudaStream_t s) {
  if (k < 0 || k > rows.n) return cudaErrorInvalidValue;
  if (rows.rows() == 0 || k == 0) return cudaSuccess;
  const T* px = static_cast<const T*>(x);
  T* pv = static_cast<T*>(values);
  if (rows.n > kTopkBitonicMax) return topk_radix<T>(largest, px, pv, indices, rows, k, scratch, scratch_bytes, s);
  const int64_t padded = next_pow2(rows.n);
  const int64_t half = padded / 2;
  const int threads = static_cast<int>(half < 32 ? 32 : half > 1024 ? 1024 : half);
  const size_t shared = static_cast<size_t>(padded) * (sizeof(red_acc_t<T>) + sizeof(int));
  topk_bitonic_kernel<T><<<blocks_for_items(rows.rows()), threads, shared, s>>>(largest, px, pv, indices, rows, k,
                                                                               padded);
  return cudaGetLastError();
}

template <class F>
cudaError_t dispatch_topk(int32_t dtype, F&& f) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return f(float{});
    case LOOM_DTYPE_FLOAT16: return f(__half{});
    case LOOM_DTYPE_DOUBLE: return f(double{});
    case LOOM_DTYPE_INT32: return f(int32_t{});
    case LOOM_DTYPE_INT64: return f(int64_t{});
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

bool topk_size_supported(const AxisRows& rows) {
  if (rows.n <= kTopkBitonicMax) return true;
  const int64_t limit = 0x7fffffff;
  return rows.rows() < limit && rows.n <= limit / (rows.rows() > 0 ? rows.rows() : 1);
}

cudaError_t topk_scratch_bytes(int32_t dtype, const AxisRows& rows, size_t* bytes) {
  *bytes = 0;
  if (rows.n <= kTopkBitonicMax || rows.rows() == 0) return cudaSuccess;
  if (!topk_size_supported(rows)) return cudaErrorInvalidValue;
  return dispatch_topk(dtype, [&](auto tag) {
    using K = typename KeyOf<decltype(tag)>::type;
    const int64_t segments = rows.rows(), items = segments * rows.n;
    size_t temp = 0;
    const cudaError_t e = radix_temp_bytes<K>(items, segments, &temp);
    *bytes = RadixScratch<K>(nullptr, temp, items, segments).total_bytes;
    return e;
  });
}

cudaError_t launch_topk(bool largest, int32_t dtype, const void* x, void* values, int64_t* indices,
                        const AxisRows& rows, int64_t k, void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (!topk_size_supported(rows)) return cudaErrorInvalidValue;
  return dispatch_topk(dtype, [&](auto tag) {
    return topk_typed<decltype(tag)>(largest, x, values, indices, rows, k, scratch, scratch_bytes, stream);
  });
}

}  // namespace loom::cuda
