// Tensor family, indexing kernels: Gather, GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND. Gathers and plain scatters move elements by
// size (any element type); scatters with a reduction compute on numbers.
#include <algorithm>

#include "common/dispatch.h"
#include "common/tensor_copy.h"
#include "common/tensor_kernels.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

constexpr int kOpen = LOOM_OPSET_OPEN_END;

// ---------------------------------------------------------------- Gather

void gather(KernelContext& ctx) {
  const sdk::ConstTensor data = ctx.required_input(0);
  const sdk::ConstTensor indices = ctx.required_input(1);
  const Shape ds = data.shape();
  const int64_t rank = static_cast<int64_t>(ds.size());
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), rank, "Gather");
  const std::vector<int64_t> idx = read_indices(indices, "Gather");
  Shape out_shape(ds.begin(), ds.begin() + axis);
  for (int64_t d : indices.shape()) out_shape.push_back(d);
  out_shape.insert(out_shape.end(), ds.begin() + axis + 1, ds.end());
  const int64_t dim = ds[axis];
  std::vector<int64_t> wrapped(idx.size());
  for (size_t j = 0; j < idx.size(); ++j) wrapped[j] = wrap_index(idx[j], dim, "Gather", axis);
  const sdk::Tensor y = ctx.output(0, out_shape, data.dtype());
  const int64_t outer = dims_product(ds, 0, axis), inner = dims_product(ds, axis + 1, rank);
  const int64_t n = static_cast<int64_t>(wrapped.size());
  if (outer * n * inner == 0) return;
  const ElementCopier c(data, y, "Gather");
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) c.copy((o * n + j) * inner, (o * dim + wrapped[j]) * inner, inner);
}

void gather_elements(KernelContext& ctx) {
  const sdk::ConstTensor data = ctx.required_input(0);
  const sdk::ConstTensor indices = ctx.required_input(1);
  const Shape ds = data.shape(), is = indices.shape();
  const int64_t rank = static_cast<int64_t>(ds.size());
  if (static_cast<int64_t>(is.size()) != rank)
    sdk::fail_invalid("GatherElements: indices rank " + std::to_string(is.size()) + " differs from data rank " +
                      std::to_string(rank));
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), rank, "GatherElements");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[d] > ds[d])
      sdk::fail_invalid("GatherElements: indices shape " + shape_string(is) + " exceeds data shape " +
                        shape_string(ds));
  const std::vector<int64_t> idx = read_indices(indices, "GatherElements");
  const sdk::Tensor y = ctx.output(0, is, data.dtype());
  if (idx.empty()) return;
  const ElementCopier c(data, y, "GatherElements");
  const Shape st = strides_of(ds);
  for_each_index(is, [&](int64_t i, const Shape& pos) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d)
      off += (d == axis ? wrap_index(idx[i], ds[d], "GatherElements", axis) : pos[d]) * st[d];
    c.copy(i, off);
  });
}

// Shared by GatherND and ScatterND: for `indices` of shape [..., k] into
// `data_shape` (after `batch_dims` leading batch dims), returns the element
// offset of each addressed slice and the slice size.
struct NdAddressing {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};

NdAddressing nd_offsets(const Shape& ds, const sdk::ConstTensor& indices, int64_t batch_dims, std::string_view op) {
  const Shape is = indices.shape();
  const int64_t r = static_cast<int64_t>(ds.size()), q = static_cast<int64_t>(is.size());
  if (q < 1) sdk::fail_invalid(std::string(op) + ": indices must have rank >= 1");
  if (batch_dims < 0 || batch_dims >= std::min(r, q))
    sdk::fail_invalid(std::string(op) + ": invalid batch_dims " + std::to_string(batch_dims));
  for (int64_t d = 0; d < batch_dims; ++d)
    if (ds[d] != is[d]) sdk::fail_invalid(std::string(op) + ": batch dims of data and indices differ");
  const int64_t k = is[q - 1];
  if (k < 1 || k > r - batch_dims)
    sdk::fail_invalid(std::string(op) + ": last indices dimension " + std::to_string(k) + " invalid for data rank " +
                      std::to_string(r));
  const std::vector<int64_t> idx = read_indices(indices, op);
  const Shape st = strides_of(ds);
  NdAddressing a;
  a.slice = dims_product(ds, batch_dims + k, r);
  const int64_t batches = dims_product(ds, 0, batch_dims);
  const int64_t batch_stride = dims_product(ds, batch_dims, r);
  const int64_t tuples = dims_product(is, batch_dims, q - 1);
  a.offsets.reserve(batches * tuples);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t t = 0; t < tuples; ++t) {
      const int64_t* tuple = idx.data() + (b * tuples + t) * k;
      int64_t off = b * batch_stride;
      for (int64_t j = 0; j < k; ++j)
        off += wrap_index(tuple[j], ds[batch_dims + j], op, batch_dims + j) * st[batch_dims + j];
      a.offsets.push_back(off);
    }
  }
  return a;
}

void gather_nd(KernelContext& ctx) {
  const sdk::ConstTensor data = ctx.required_input(0);
  const sdk::ConstTensor indices = ctx.required_input(1);
  const Shape ds = data.shape(), is = indices.shape();
  const int64_t batch_dims = ctx.node().attr_int("batch_dims", 0);
  const NdAddressing a = nd_offsets(ds, indices, batch_dims, "GatherND");
  Shape out_shape(is.begin(), is.end() - 1);
  out_shape.insert(out_shape.end(), ds.begin() + batch_dims + is.back(), ds.end());
  const sdk::Tensor y = ctx.output(0, out_shape, data.dtype());
  if (y.size() == 0) return;
  const ElementCopier c(data, y, "GatherND");
  for (size_t i = 0; i < a.offsets.size(); ++i) c.copy(static_cast<int64_t>(i) * a.slice, a.offsets[i], a.slice);
}

// ---------------------------------------------------------------- Scatters

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const sdk::Node& node, std::string_view op) {
  const std::string r = node.attr_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  sdk::fail_invalid(std::string(op) + ": unknown reduction '" + r + "'");
}

// Writes updates[src .. src+n) into out[dst .. dst+n), combining by `red`
// (numeric types only when red != kNone).
class ScatterWriter {
 public:
  ScatterWriter(const sdk::ConstTensor& updates, const sdk::Tensor& out, Reduction red, std::string_view op)
      : copier_(updates, out, op), updates_(updates), out_(out), red_(red), op_(op) {}

  void write(int64_t dst, int64_t src, int64_t n) const {
    if (red_ == Reduction::kNone) {
      copier_.copy(dst, src, n);
      return;
    }
    dispatch<NumericTypes>(out_.dtype(), op_, [&](auto tag) {
      using T = decltype(tag);
      using C = compute_t<T>;
      const T* u = updates_.data<T>();
      T* o = out_.mutable_data<T>();
      for (int64_t k = 0; k < n; ++k) {
        const C a = static_cast<C>(o[dst + k]), b = static_cast<C>(u[src + k]);
        C r = a;
        switch (red_) {
          case Reduction::kAdd: r = a + b; break;
          case Reduction::kMul: r = a * b; break;
          case Reduction::kMax: r = std::max(a, b); break;
          case Reduction::kMin: r = std::min(a, b); break;
          case Reduction::kNone: break;
        }
        o[dst + k] = static_cast<T>(r);
      }
    });
  }

 private:
  ElementCopier copier_;
  sdk::ConstTensor updates_;
  sdk::Tensor out_;
  Reduction red_;
  std::string_view op_;
};

void scatter_elements_impl(KernelContext& ctx, std::string_view op) {
  const sdk::ConstTensor data = ctx.required_input(0);
  const sdk::ConstTensor indices = ctx.required_input(1);
  const sdk::ConstTensor updates = ctx.required_input(2);
  const Shape ds = data.shape(), is = indices.shape();
  const int64_t rank = static_cast<int64_t>(ds.size());
  if (updates.shape() != is)
    sdk::fail_invalid(std::string(op) + ": updates shape " + shape_string(updates.shape()) +
                      " differs from indices shape " + shape_string(is));
  if (static_cast<int64_t>(is.size()) != rank)
    sdk::fail_invalid(std::string(op) + ": indices rank differs from data rank");
  if (updates.dtype() != data.dtype()) sdk::fail_invalid(std::string(op) + ": updates type differs from data type");
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), rank, op);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[d] > ds[d])
      sdk::fail_invalid(std::string(op) + ": indices shape " + shape_string(is) + " exceeds data shape " +
                        shape_string(ds));
  const Reduction red = parse_reduction(ctx.node(), op);
  const std::vector<int64_t> idx = read_indices(indices, op);
  const sdk::Tensor y = ctx.output(0, ds, data.dtype());
  copy_all(data, y, op);
  if (idx.empty()) return;
  const ScatterWriter w(updates, y, red, op);
  const Shape st = strides_of(ds);
  for_each_index(is, [&](int64_t i, const Shape& pos) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) off += (d == axis ? wrap_index(idx[i], ds[d], op, axis) : pos[d]) * st[d];
    w.write(off, i, 1);
  });
}

void scatter(KernelContext& ctx) { scatter_elements_impl(ctx, "Scatter"); }
void scatter_elements(KernelContext& ctx) { scatter_elements_impl(ctx, "ScatterElements"); }

void scatter_nd(KernelContext& ctx) {
  const sdk::ConstTensor data = ctx.required_input(0);
  const sdk::ConstTensor indices = ctx.required_input(1);
  const sdk::ConstTensor updates = ctx.required_input(2);
  const Shape ds = data.shape(), is = indices.shape();
  if (updates.dtype() != data.dtype()) sdk::fail_invalid("ScatterND: updates type differs from data type");
  const NdAddressing a = nd_offsets(ds, indices, 0, "ScatterND");
  Shape expect(is.begin(), is.end() - 1);
  expect.insert(expect.end(), ds.begin() + is.back(), ds.end());
  if (updates.shape() != expect)
    sdk::fail_invalid("ScatterND: updates shape " + shape_string(updates.shape()) + ", expected " +
                      shape_string(expect));
  const Reduction red = parse_reduction(ctx.node(), "ScatterND");
  const sdk::Tensor y = ctx.output(0, ds, data.dtype());
  copy_all(data, y, "ScatterND");
  if (a.slice == 0 || a.offsets.empty()) return;
  const ScatterWriter w(updates, y, red, "ScatterND");
  for (size_t i = 0; i < a.offsets.size(); ++i) w.write(a.offsets[i], static_cast<int64_t>(i) * a.slice, a.slice);
}

}  // namespace

void register_tensor_index_kernels(sdk::KernelRegistry& r) {
  r.add("", "Gather", 1, kOpen, gather);
  r.add("", "GatherElements", 11, kOpen, gather_elements);
  r.add("", "GatherND", 11, kOpen, gather_nd);
  r.add("", "Scatter", 9, kOpen, scatter);
  r.add("", "ScatterElements", 11, kOpen, scatter_elements);
  r.add("", "ScatterND", 11, kOpen, scatter_nd);
}

}  // namespace loom::reference
