// Neural-network ops ONNX added after opset 17: RotaryEmbedding-23,
// Col2Im-18 and AffineGrid-20. Computed in double, rounded once.
#include <algorithm>
#include <cmath>

#include "common/reduction_common.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// RotaryEmbedding: X is [batch, heads, sequence, head size] or [batch,
// sequence, heads * head size] (num_heads given). The first
// rotary_embedding_dim (default: all) values of each head are rotated in
// pairs -- (k, k + half), or (2k, 2k + 1) when interleaved -- by the angle
// whose cos/sin the caches hold at the token's position: caches [max
// position, >= half] indexed by position_ids [batch, sequence], or, with no
// position_ids, caches [batch, sequence, >= half]. The rest is copied.
void rotary_embedding(KernelContext& ctx) {
  const std::string op = "RotaryEmbedding";
  const sdk::ConstTensor x_t = ctx.required_input(0);
  const sdk::ConstTensor cos_t = ctx.required_input(1), sin_t = ctx.required_input(2);
  const sdk::ConstTensor pos_t = ctx.input(3);
  const Shape in = x_t.shape();
  const sdk::Node node = ctx.node();
  int64_t B = 0, H = 0, S = 0, D = 0;
  if (in.size() == 4) {
    B = in[0], H = in[1], S = in[2], D = in[3];
  } else if (in.size() == 3) {
    H = node.attr_int("num_heads", 0);
    if (H <= 0 || in[2] % H != 0)
      sdk::fail_invalid(op + ": a 3-D input needs num_heads (got " + std::to_string(H) + ") dividing its hidden size " +
                        std::to_string(in[2]));
    B = in[0], S = in[1], D = in[2] / H;
  } else {
    sdk::fail_invalid(op + ": input must be 3-D or 4-D, got " + shape_string(in));
  }
  int64_t rot = node.attr_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = D;
  if (rot < 0 || rot > D || rot % 2 != 0)
    sdk::fail_invalid(op + ": rotary_embedding_dim " + std::to_string(rot) + " must be even and at most the head size " +
                      std::to_string(D));
  const int64_t half = rot / 2;
  const bool interleaved = node.attr_int("interleaved", 0) != 0;
  const Shape cs = cos_t.shape();
  if (sin_t.shape() != cs) sdk::fail_invalid(op + ": cos_cache and sin_cache differ in shape");
  std::vector<int64_t> positions;
  if (pos_t.exists()) {
    if (pos_t.shape() != Shape{B, S})
      sdk::fail_invalid(op + ": position_ids must be [" + std::to_string(B) + "," + std::to_string(S) + "], got " +
                        shape_string(pos_t.shape()));
    if (cs.size() != 2 || cs[1] < half)
      sdk::fail_invalid(op + ": caches must be [max position, >= " + std::to_string(half) + "], got " + shape_string(cs));
    positions = pos_t.to_int64_vector();
    for (int64_t p : positions)
      if (p < 0 || p >= cs[0])
        sdk::fail_invalid(op + ": position id " + std::to_string(p) + " is outside the caches' " + std::to_string(cs[0]) +
                          " positions");
  } else if (cs.size() != 3 || cs[0] != B || cs[1] != S || cs[2] < half) {
    sdk::fail_invalid(op + ": without position_ids the caches must be [" + std::to_string(B) + "," + std::to_string(S) +
                      ", >= " + std::to_string(half) + "], got " + shape_string(cs));
  }
  const int64_t width = cs.back();
  const std::vector<double> x = float_tensor_to_doubles(x_t, op);
  const std::vector<double> cosv = float_tensor_to_doubles(cos_t, op), sinv = float_tensor_to_doubles(sin_t, op);
  std::vector<double> y(x);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t cache_row = positions.empty() ? b * S + s : positions[static_cast<size_t>(b * S + s)];
      const double* c = cosv.data() + cache_row * width;
      const double* sn = sinv.data() + cache_row * width;
      for (int64_t h = 0; h < H; ++h) {
        const int64_t base = in.size() == 4 ? ((b * H + h) * S + s) * D : (b * S + s) * H * D + h * D;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = base + (interleaved ? 2 * k : k), i2 = base + (interleaved ? 2 * k + 1 : k + half);
          const double x1 = x[static_cast<size_t>(i1)], x2 = x[static_cast<size_t>(i2)];
          y[static_cast<size_t>(i1)] = c[k] * x1 - sn[k] * x2;
          y[static_cast<size_t>(i2)] = sn[k] * x1 + c[k] * x2;
        }
      }
    }
  write_float_output(ctx, 0, in, x_t.dtype(), y, op);
}

// Col2Im: input [N, C * prod(block_shape), L] holds L blocks of each
// channel; they are summed back into an image [N, C, *image_shape] with the
// given strides, pads ([begin..., end...]) and dilations. L must be the
// number of block positions those give.
void col2im(KernelContext& ctx) {
  const std::string op = "Col2Im";
  const sdk::ConstTensor x_t = ctx.required_input(0);
  const Shape in = x_t.shape();
  const std::vector<int64_t> image = ctx.required_input(1).to_int64_vector();
  const std::vector<int64_t> block = ctx.required_input(2).to_int64_vector();
  const size_t n = image.size();
  if (in.size() != 3) sdk::fail_invalid(op + ": input must be 3-D, got " + shape_string(in));
  if (n == 0 || block.size() != n)
    sdk::fail_invalid(op + ": image_shape and block_shape must have the same, non-zero length");
  const sdk::Node node = ctx.node();
  const std::vector<int64_t> strides = node.find_ints("strides").value_or(std::vector<int64_t>(n, 1));
  const std::vector<int64_t> dilations = node.find_ints("dilations").value_or(std::vector<int64_t>(n, 1));
  const std::vector<int64_t> pads = node.find_ints("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n)
    sdk::fail_invalid(op + ": strides and dilations need " + std::to_string(n) + " values and pads " +
                      std::to_string(2 * n));
  const int64_t block_size = sdk::checked_element_count(block, op + ": block size");
  if (block_size == 0 || in[1] % block_size != 0)
    sdk::fail_invalid(op + ": input dim 1 (" + std::to_string(in[1]) + ") is not a multiple of the block size " +
                      std::to_string(block_size));
  std::vector<int64_t> blocks(n);  // block positions per spatial dim
  for (size_t d = 0; d < n; ++d) {
    if (strides[d] <= 0 || dilations[d] <= 0 || image[d] < 0 || pads[d] < 0 || pads[d + n] < 0)
      sdk::fail_invalid(op + ": strides and dilations must be positive, image_shape and pads non-negative");
    const int64_t span = sdk::checked_add(sdk::checked_mul(dilations[d], block[d] - 1, op + ": block span"), 1, op);
    const int64_t padded = sdk::checked_add(sdk::checked_add(image[d], pads[d], op), pads[d + n], op + ": padded size");
    if (padded < span) sdk::fail_invalid(op + ": the block does not fit the padded image in dim " + std::to_string(d));
    blocks[d] = (padded - span) / strides[d] + 1;
  }
  if (sdk::checked_element_count(blocks, op + ": block count") != in[2])
    sdk::fail_invalid(op + ": input dim 2 (" + std::to_string(in[2]) + ") is not the number of block positions, " +
                      std::to_string(element_count(blocks)));
  const int64_t N = in[0], C = in[1] / block_size, L = in[2];
  Shape out_shape = {N, C};
  out_shape.insert(out_shape.end(), image.begin(), image.end());
  const int64_t pixels = sdk::checked_element_count(image, op + ": image size");
  const int64_t count = sdk::checked_element_count(out_shape, op + ": output size");
  // The output first: its size comes from image_shape's values, and the
  // host checks it against the run's limits before anything is allocated.
  sdk::Tensor out = ctx.output(0, out_shape, x_t.dtype());
  if (count == 0) return;
  const std::vector<double> x = float_tensor_to_doubles(x_t, op);
  double* y = ctx.scratch<double>(count, op + ": sums");
  std::fill(y, y + count, 0.0);
  std::vector<int64_t> bi(n), li(n);
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t k = 0; k < block_size; ++k) {
      for (int64_t r = k, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
        bi[static_cast<size_t>(d)] = r % block[static_cast<size_t>(d)];
        r /= block[static_cast<size_t>(d)];
      }
      const double* src = x.data() + (nc * block_size + k) * L;
      for (int64_t l = 0; l < L; ++l) {
        int64_t pixel = 0;
        bool inside = true;
        for (int64_t r = l, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
          const size_t du = static_cast<size_t>(d);
          li[du] = r % blocks[du];
          r /= blocks[du];
        }
        for (size_t d = 0; d < n && inside; ++d) {
          const int64_t p = li[d] * strides[d] - pads[d] + bi[d] * dilations[d];
          inside = p >= 0 && p < image[d];
          pixel = pixel * image[d] + p;
        }
        if (inside) y[nc * pixels + pixel] += src[l];
      }
    }
  dispatch<FloatTypes>(x_t.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.mutable_data<T>();
    for (int64_t i = 0; i < count; ++i) p[i] = to_elem<T>(y[i]);
  });
}

// The normalised coordinates of `size` sample points along one dim: -1 to
// 1 inclusive when align_corners, else the centres of `size` equal cells.
double grid_coordinate(int64_t i, int64_t size, bool align_corners) {
  if (align_corners) return size == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(size - 1);
  return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(size) - 1.0;
}

// AffineGrid: theta [N, 2, 3] with size [N, C, H, W] gives grid [N, H, W,
// 2]; theta [N, 3, 4] with size [N, C, D, H, W] gives [N, D, H, W, 3]: each
// point (x, y[, z]) of the base grid (x along W) mapped by theta.
void affine_grid(KernelContext& ctx) {
  const std::string op = "AffineGrid";
  const sdk::ConstTensor theta_t = ctx.required_input(0);
  const std::vector<int64_t> size = ctx.required_input(1).to_int64_vector();
  if (size.size() != 4 && size.size() != 5)
    sdk::fail_invalid(op + ": size must have 4 or 5 values, got " + std::to_string(size.size()));
  const int64_t dims = static_cast<int64_t>(size.size()) - 2;  // 2 or 3 spatial dims
  const int64_t N = size[0];
  if (theta_t.shape() != Shape{N, dims, dims + 1})
    sdk::fail_invalid(op + ": theta must be [" + std::to_string(N) + "," + std::to_string(dims) + "," +
                      std::to_string(dims + 1) + "], got " + shape_string(theta_t.shape()));
  const int64_t D = dims == 3 ? size[2] : 1, H = size[size.size() - 2], W = size.back();
  Shape out_shape = {N};
  if (dims == 3) out_shape.push_back(D);
  out_shape.insert(out_shape.end(), {H, W, dims});
  const int64_t count = sdk::checked_element_count(out_shape, op + ": grid size");
  const bool align = ctx.node().attr_int("align_corners", 0) != 0;
  const std::vector<double> theta = float_tensor_to_doubles(theta_t, op);
  // Written straight into the output, which the host allocates within the
  // run's limits (its size comes from size's values).
  sdk::Tensor out = ctx.output(0, out_shape, theta_t.dtype());
  if (count == 0) return;
  dispatch<FloatTypes>(theta_t.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    T* grid = out.mutable_data<T>();
    int64_t at = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w) {
            const double point[3] = {grid_coordinate(w, W, align), grid_coordinate(h, H, align),
                                     grid_coordinate(d, D, align)};
            for (int64_t r = 0; r < dims; ++r) {
              const double* row = theta.data() + (n * dims + r) * (dims + 1);
              double v = row[dims];
              for (int64_t c = 0; c < dims; ++c) v += row[c] * point[c];
              grid[at++] = to_elem<T>(v);
            }
          }
  });
}

}  // namespace

void register_nn_recent_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add("", "RotaryEmbedding", 23, kOpen, rotary_embedding);
  r.add("", "Col2Im", 18, kOpen, col2im);
  r.add("", "AffineGrid", 20, kOpen, affine_grid);
}

}  // namespace loom::reference
