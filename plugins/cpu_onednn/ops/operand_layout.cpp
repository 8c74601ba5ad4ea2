#include "ops/operand_layout.h"

#include <algorithm>
#include <numeric>

namespace loom::onednn {

dnnl::memory::desc desc_like(const dnnl::memory::desc& like, const std::vector<int64_t>& dims) {
  const dnnl_memory_desc_t& l = like.data;
  const int rank = l.ndims;
  if (like.dims() == dims) return like;
  // Not a dense blocked layout (or a rank mismatch the caller should not
  // make): plain row-major is the safe answer.
  if (l.format_kind != dnnl_blocked || static_cast<int>(dims.size()) != rank) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
  }
  const dnnl_blocking_desc_t& blk = l.format_desc.blocking;
  std::vector<int64_t> block(rank, 1);
  int64_t inner = 1;
  for (int k = 0; k < blk.inner_nblks; ++k) {
    block[blk.inner_idxs[k]] *= blk.inner_blks[k];
    inner *= blk.inner_blks[k];
  }
  // Outer order: largest stride first; ties (size-1 dims) keep logical order.
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return blk.strides[a] > blk.strides[b]; });
  dnnl_memory_desc_t out = l;
  out.offset0 = 0;
  int64_t stride = inner;
  for (int k = rank; k-- > 0;) {
    const int d = order[k];
    out.dims[d] = dims[d];
    out.padded_dims[d] = (dims[d] + block[d] - 1) / block[d] * block[d];
    out.padded_offsets[d] = 0;
    out.format_desc.blocking.strides[d] = stride;
    stride *= out.padded_dims[d] / block[d];
  }
  return dnnl::memory::desc(out);
}

dnnl::memory::desc desc_with_type(const dnnl::memory::desc& desc, dnnl::memory::data_type type) {
  // Blocked strides count elements, so only the type changes.
  dnnl_memory_desc_t d = desc.data;
  d.data_type = static_cast<dnnl_data_type_t>(type);
  d.extra = dnnl_memory_extra_desc_t{};
  return dnnl::memory::desc(d);
}

}  // namespace loom::onednn
