// Normalisation kernels: one block per normalised row, three passes over
// the row's values (sum for the mean, sum of squared deviations, write),
// each value recomputed from its source (x + skip + bias, or the embedding
// rows) rather than staged, so any row length fits.
#include "kernels/norm.h"
#include "kernels/reduce_device.cuh"

namespace loom::cuda {
namespace {

// The affine part and the outputs of a normalisation.
template <class T>
struct NormOut {
  const T* gamma;
  const T* beta;
  StridedMap gamma_map, beta_map;
  int64_t channels;
  bool simplified;
  float epsilon;
  T* y;
  float* mean;
  float* inv_std;
  T* sum;

  __device__ int64_t param_at(const StridedMap& m, int64_t r, int64_t c) const {
    if (channels > 0) return r % channels;
    return m.rank == 0 ? c : m.offset(c);
  }
};

// x (+ skip) (+ bias), row by row.
template <class T>
struct PlainSource {
  const T* x;
  const T* skip;
  int64_t skip_size;
  const T* bias;
  int64_t cols;

  struct Row {
    const T *x, *skip, *bias;
    __device__ red_acc_t<T> load(int64_t c) const {
      red_acc_t<T> v = load_acc(x, c);
      if (skip != nullptr) v += load_acc(skip, c);
      if (bias != nullptr) v += load_acc(bias, c);
      return v;
    }
  };
  __device__ Row row(int64_t r) const {
    // skip_size is a multiple of cols, so row r's skip elements are contiguous.
    return Row{x + r * cols, skip == nullptr ? nullptr : skip + (r * cols) % skip_size, bias};
  }
};

// word[id] + position[p] (+ segment[sid]) for token r.
template <class T>
struct EmbedSource {
  EmbedRows p;

  struct Row {
    const T *word, *position, *segment;
    bool valid;
    __device__ red_acc_t<T> load(int64_t c) const {
      if (!valid) return quiet_nan<red_acc_t<T>>();
      red_acc_t<T> v = load_acc(word, c) + load_acc(position, c);
      if (segment != nullptr) v += load_acc(segment, c);
      return v;
    }
  };
  __device__ Row row(int64_t r) const {
    const int64_t s = r % p.seq;
    const int64_t w = p.input_ids[r];
    const int64_t pos = p.position_ids == nullptr ? s : p.position_ids[p.position_broadcast ? s : r];
    const int64_t g = p.segment_ids == nullptr ? 0 : p.segment_ids[r];
    const bool valid = w >= 0 && w < p.word_rows && pos >= 0 && pos < p.position_rows &&
                       (p.segment == nullptr || (g >= 0 && g < p.segment_rows));
    const T* word = static_cast<const T*>(p.word);
    const T* position = static_cast<const T*>(p.position);
    const T* segment = static_cast<const T*>(p.segment);
    if (!valid) return Row{word, position, nullptr, false};
    return Row{word + w * p.hidden, position + pos * p.hidden, segment == nullptr ? nullptr : segment + g * p.hidden,
               true};
  }
};

template <class T, int Threads, class Source>
__global__ void __launch_bounds__(Threads) norm_rows_kernel(Source src, NormOut<T> o, int64_t rows, int64_t cols) {
  using A = red_acc_t<T>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const typename Source::Row row = src.row(r);
    A mean = A(0);
    if (!o.simplified) {
      A s = A(0);
      for (int64_t c = threadIdx.x; c < cols; c += Threads) s += row.load(c);
      mean = block_all_reduce<Threads>(s, SumOp()) / static_cast<A>(cols);
    }
    A sq = A(0);
    for (int64_t c = threadIdx.x; c < cols; c += Threads) {
      const A d = row.load(c) - mean;
      sq += d * d;
    }
    sq = block_all_reduce<Threads>(sq, SumOp());
    const A inv = A(1) / dm::sqrt(sq / static_cast<A>(cols) + static_cast<A>(o.epsilon));
    if (threadIdx.x == 0) {
      if (o.mean != nullptr) o.mean[r] = static_cast<float>(mean);
      if (o.inv_std != nullptr) o.inv_std[r] = static_cast<float>(inv);
    }
    for (int64_t c = threadIdx.x; c < cols; c += Threads) {
      const A v = row.load(c);
      A out = (v - mean) * inv * load_acc(o.gamma, o.param_at(o.gamma_map, r, c));
      if (o.beta != nullptr) out += load_acc(o.beta, o.param_at(o.beta_map, r, c));
      o.y[r * cols + c] = store_as<T>(out);
      if (o.sum != nullptr) o.sum[r * cols + c] = store_as<T>(v);
    }
  }
}

template <class T, class Source>
cudaError_t launch_rows(const Source& src, const NormOut<T>& o, int64_t rows, int64_t cols, cudaStream_t s) {
  if (rows == 0) return cudaSuccess;
  const unsigned blocks = blocks_for_items(rows);
  if (cols <= 64) norm_rows_kernel<T, 32, Source><<<blocks, 32, 0, s>>>(src, o, rows, cols);
  else if (cols <= 1024) norm_rows_kernel<T, 128, Source><<<blocks, 128, 0, s>>>(src, o, rows, cols);
  else norm_rows_kernel<T, 256, Source><<<blocks, 256, 0, s>>>(src, o, rows, cols);
  return cudaGetLastError();
}

template <class T>
cudaError_t norm_typed(const NormRows& p, cudaStream_t s) {
  const PlainSource<T> src{static_cast<const T*>(p.x), static_cast<const T*>(p.skip), p.skip_size,
                           static_cast<const T*>(p.bias), p.cols};
  const NormOut<T> o{static_cast<const T*>(p.gamma), static_cast<const T*>(p.beta), p.gamma_map, p.beta_map,
                     p.channels, p.simplified, p.epsilon, static_cast<T*>(p.y), p.mean, p.inv_std,
                     static_cast<T*>(p.sum)};
  return launch_rows<T>(src, o, p.rows, p.cols, s);
}

__global__ void mask_index_kernel(const int32_t* mask, int32_t* mask_index, int64_t batch, int64_t seq) {
  LOOM_GRID_STRIDE_LOOP(b, batch) {
    int32_t count = 0;
    if (mask != nullptr)
      for (int64_t s = 0; s < seq; ++s) count += mask[b * seq + s] == 1 ? 1 : 0;
    mask_index[b] = count;
  }
}

template <class T>
cudaError_t embed_typed(const EmbedRows& p, cudaStream_t s) {
  if (p.mask_index != nullptr && p.batch > 0) {
    mask_index_kernel<<<grid_for(p.batch), kBlockThreads, 0, s>>>(p.mask, p.mask_index, p.batch, p.seq);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  const EmbedSource<T> src{p};
  const NormOut<T> o{static_cast<const T*>(p.gamma), static_cast<const T*>(p.beta), StridedMap{}, StridedMap{}, 0,
                     false, p.epsilon, static_cast<T*>(p.y), nullptr, nullptr, static_cast<T*>(p.sum)};
  return launch_rows<T>(src, o, p.batch * p.seq, p.hidden, s);
}

}  // namespace

cudaError_t launch_norm_rows(int32_t dtype, const NormRows& p, cudaStream_t stream) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return norm_typed<float>(p, stream);
    case LOOM_DTYPE_FLOAT16: return norm_typed<__half>(p, stream);
    case LOOM_DTYPE_DOUBLE: return norm_typed<double>(p, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_embed_layer_norm(int32_t dtype, const EmbedRows& p, cudaStream_t stream) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return embed_typed<float>(p, stream);
    case LOOM_DTYPE_FLOAT16: return embed_typed<__half>(p, stream);
    case LOOM_DTYPE_DOUBLE: return embed_typed<double>(p, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace loom::cuda
