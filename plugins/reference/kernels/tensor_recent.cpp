// Data-movement ops ONNX added after opset 17: TensorScatter-24 (writes a
// KV-cache update in place of the old entries) and CenterCropPad-18. Both
// copy elements as bytes, so they serve every fixed-width element type.
#include <cstring>

#include "common/shape.h"
#include "common/tensor_kernels.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

size_t element_bytes(const sdk::ConstTensor& t, const std::string& op) {
  const size_t bytes = sdk::dtype_size(t.dtype());
  if (bytes == 0) sdk::fail_invalid(op + ": element type " + sdk::dtype_name(t.dtype()) + " is not supported");
  return bytes;
}

// TensorScatter: present_cache = past_cache with update's slices along
// `axis` (not the batch axis 0) written at write_indices[b] + s for batch
// entry b (0 when write_indices is absent); in "circular" mode positions
// wrap around the cache length, in "linear" mode they must fit.
void tensor_scatter(KernelContext& ctx) {
  const std::string op = "TensorScatter";
  const sdk::ConstTensor past = ctx.required_input(0), update = ctx.required_input(1);
  const Shape ps = past.shape(), us = update.shape();
  const int64_t rank = static_cast<int64_t>(ps.size());
  if (rank < 2) sdk::fail_invalid(op + ": past_cache must have rank >= 2, got " + shape_string(ps));
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", -2), rank, op);
  if (axis == 0) sdk::fail_invalid(op + ": axis must not be the batch axis 0");
  if (update.dtype() != past.dtype()) sdk::fail_invalid(op + ": update and past_cache differ in element type");
  bool same = us.size() == ps.size();
  for (size_t d = 0; same && d < ps.size(); ++d) same = static_cast<int64_t>(d) == axis ? us[d] <= ps[d] : us[d] == ps[d];
  if (!same)
    sdk::fail_invalid(op + ": update " + shape_string(us) + " must match past_cache " + shape_string(ps) +
                      " except along axis " + std::to_string(axis) + ", where it may not be longer");
  const std::string mode = ctx.node().attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular")
    sdk::fail_invalid(op + ": mode must be 'linear' or 'circular', got '" + mode + "'");
  const int64_t batch = ps[0], length = ps[static_cast<size_t>(axis)], count = us[static_cast<size_t>(axis)];
  std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
  if (const sdk::ConstTensor w = ctx.input(2); w.exists()) {
    starts = w.to_int64_vector();
    if (static_cast<int64_t>(starts.size()) != batch)
      sdk::fail_invalid(op + ": write_indices must hold one index per batch entry (" + std::to_string(batch) + "), got " +
                        std::to_string(starts.size()));
  }
  for (int64_t s : starts)
    if (s < 0 || (mode == "linear" && (s > length || count > length - s)))
      sdk::fail_invalid(op + ": write index " + std::to_string(s) + " with " + std::to_string(count) +
                        " entries does not fit the cache length " + std::to_string(length));
  const size_t bytes = element_bytes(past, op);
  sdk::Tensor out = ctx.output(0, ps, past.dtype());
  if (out.size() == 0) return;
  auto* dst = static_cast<unsigned char*>(out.raw_mutable_data());
  std::memcpy(dst, past.raw_data(), static_cast<size_t>(past.size()) * bytes);
  const auto* src = static_cast<const unsigned char*>(update.raw_data());
  const int64_t inner = dims_product(ps, static_cast<size_t>(axis) + 1, ps.size());
  const int64_t outer = dims_product(ps, 0, static_cast<size_t>(axis));  // batch-major
  const int64_t per_batch = outer / batch;
  const size_t row = static_cast<size_t>(inner) * bytes;
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t start = starts[static_cast<size_t>(o / per_batch)];
    for (int64_t s = 0; s < count; ++s) {
      const int64_t at = (start + s) % length;  // linear writes fit: the modulo changes nothing
      std::memcpy(dst + static_cast<size_t>((o * length + at) * inner) * bytes,
                  src + static_cast<size_t>((o * count + s) * inner) * bytes, row);
    }
  }
}

// CenterCropPad: each axis in `axes` (all by default) takes the size given
// in `shape`, cropped or zero-padded symmetrically (the odd element at the
// end).
void center_crop_pad(KernelContext& ctx) {
  const std::string op = "CenterCropPad";
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  const std::vector<int64_t> sizes = ctx.required_input(1).to_int64_vector();
  std::vector<int64_t> axes = ctx.node().attr_ints("axes", {});
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  if (sizes.size() != axes.size())
    sdk::fail_invalid(op + ": 'shape' has " + std::to_string(sizes.size()) + " values for " +
                      std::to_string(axes.size()) + " axes");
  Shape out_shape = in;
  Shape shift(in.size(), 0);  // source index = output index + shift
  std::vector<bool> seen(in.size(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t a = static_cast<size_t>(normalize_axis(axes[k], rank, op));
    if (seen[a]) sdk::fail_invalid(op + ": axis " + std::to_string(axes[k]) + " is given twice");
    seen[a] = true;
    if (sizes[k] < 0) sdk::fail_invalid(op + ": negative target size " + std::to_string(sizes[k]));
    out_shape[a] = sizes[k];
    shift[a] = in[a] >= sizes[k] ? (in[a] - sizes[k]) / 2 : -((sizes[k] - in[a]) / 2);
  }
  const int64_t count = sdk::checked_element_count(out_shape, op + ": output size");
  const size_t bytes = element_bytes(x, op);
  sdk::Tensor out = ctx.output(0, out_shape, x.dtype());
  if (count == 0) return;
  auto* dst = static_cast<unsigned char*>(out.raw_mutable_data());
  const auto* src = static_cast<const unsigned char*>(x.raw_data());
  std::memset(dst, 0, static_cast<size_t>(count) * bytes);
  const Shape in_strides = strides_of(in);
  std::vector<int64_t> idx(in.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t from = 0;
    bool inside = true;
    for (size_t d = 0; d < in.size() && inside; ++d) {
      const int64_t s = idx[d] + shift[d];
      inside = s >= 0 && s < in[d];
      from += s * in_strides[d];
    }
    if (inside) std::memcpy(dst + static_cast<size_t>(i) * bytes, src + static_cast<size_t>(from) * bytes, bytes);
    for (size_t d = in.size(); d-- > 0;) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

void register_tensor_recent_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add("", "TensorScatter", 24, kOpen, tensor_scatter);
  r.add("", "CenterCropPad", 18, kOpen, center_crop_pad);
}

}  // namespace loom::reference
