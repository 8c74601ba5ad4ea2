// Data-movement launchers (kernels/movement.cu, kernels/resize.cu). They
// move elements by size (1, 2, 4 or 8 bytes: every fixed-size type) unless
// they say otherwise. Pointers are device memory; everything is queued on
// `stream`; a launcher with n == 0 queues nothing. Each returns the launch
// error, if any, or cudaErrorInvalidValue for an element size or type it
// lacks.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/index_math.h"
#include "kernels/movement_index.h"
#include "kernels/resize_index.h"
#include "loom/abi/base.h"

namespace loom::cuda {

// y[i] = x[map.offset(i)] for i < n (Transpose, Slice, Expand,
// DepthToSpace, SpaceToDepth). `x` may already point past a base offset.
cudaError_t launch_strided_copy(size_t element_bytes, const void* x, const StridedMap& map, void* y, int64_t n,
                                cudaStream_t stream);

// rows x row_length elements: dst[r * dst_pitch + j] = src[r * src_pitch + j]
// (Concat, Split; pitches in elements, pointers already at the first
// element). A single contiguous block becomes one cudaMemcpyAsync.
cudaError_t launch_rows_copy(size_t element_bytes, const void* src, int64_t src_pitch, void* dst,
                             int64_t dst_pitch, int64_t rows, int64_t row_length, cudaStream_t stream);

// y[i] = the element whose bytes are the low `element_bytes` bytes of
// `pattern` (little endian), for i < n.
cudaError_t launch_fill(size_t element_bytes, uint64_t pattern, void* y, int64_t n, cudaStream_t stream);

// y[i] = x[map.offset(i)] (Tile).
cudaError_t launch_tile(size_t element_bytes, const void* x, const TileMap& map, void* y, int64_t n,
                        cudaStream_t stream);

// y[i] = x[map.offset(i)], or the element in `pattern` where the offset is
// -1 (Pad).
cudaError_t launch_pad(size_t element_bytes, const void* x, const PadMap& map, uint64_t pattern, void* y, int64_t n,
                       cudaStream_t stream);

// Gather: see GatherShape; `indices` are int32 or int64 (index_dtype, a
// LOOM_DTYPE); out-of-range indices give zero bytes.
cudaError_t launch_gather(size_t element_bytes, const void* data, int32_t index_dtype, const void* indices,
                          const GatherShape& shape, void* y, int64_t n, cudaStream_t stream);

// GatherElements: y[i] = data[map.offset(i, indices[i])] (zero bytes when
// out of range).
cudaError_t launch_gather_elements(size_t element_bytes, const void* data, int32_t index_dtype, const void* indices,
                                   const GatherElementsMap& map, void* y, int64_t n, cudaStream_t stream);

// GatherND: y[t * slice + j] = data[map.slice_offset(t, indices + t * k) + j]
// (zero bytes for a tuple out of range); n = tuples over all batches * slice.
cudaError_t launch_gather_nd(size_t element_bytes, const void* data, int32_t index_dtype, const void* indices,
                             const GatherNdMap& map, void* y, int64_t n, cudaStream_t stream);

// Range: y[i] = start + T(i) * delta in T (float, double, int16, int32,
// int64; `start` and `delta` hold the value converted to double, exact for
// those types except int64 beyond 2^53, hence the int64 pair).
struct RangeArgs {
  double start = 0, delta = 0;
  int64_t start_i = 0, delta_i = 0;
};
cudaError_t launch_range(int32_t dtype, const RangeArgs& args, void* y, int64_t n, cudaStream_t stream);

// Resize, in two steps: the tap table (geometry.tap_offset[rank - 1] +
// out_dims[rank - 1] entries, `taps` device memory of as many ResizeTap),
// then the output. Nearest copies the one tap by size (and writes `pattern`
// where tf_crop_and_resize falls outside); linear / cubic interpolate in
// double for float, float16, double (dtype), writing `extrapolation` where
// outside.
cudaError_t launch_resize_taps(const ResizeAttrs& attrs, const ResizeGeometry& geometry, ResizeTap* taps,
                               int64_t tap_count, cudaStream_t stream);
cudaError_t launch_resize_nearest(size_t element_bytes, const ResizeGeometry& geometry, const ResizeTap* taps,
                                  const void* x, uint64_t pattern, void* y, int64_t n, cudaStream_t stream);
cudaError_t launch_resize_interpolate(int32_t dtype, const ResizeGeometry& geometry, const ResizeTap* taps,
                                      const void* x, float extrapolation, void* y, int64_t n, cudaStream_t stream);

}  // namespace loom::cuda
