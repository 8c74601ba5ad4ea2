// The data-movement ops on the CUDA EP, part two: Concat and Split (row
// copies between the tensors viewed as [outer, axis * inner]), Expand
// (a broadcast read) and Tile (a modulo read).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/movement_common.h"

namespace loom::cuda {
namespace {

constexpr int kOpen = LOOM_OPSET_OPEN_END;

// --- Concat, Split: row copies ---

class ConcatKernel {
 public:
  ConcatKernel(const sdk::Node& node, const EpContext&) : axis_(node.required_int("axis")) {}
  void compute(sdk::KernelContext& ctx) const {
    const size_t count = ctx.input_count();
    if (count == 0) fail_op("Concat", "no inputs");
    sdk::ConstTensor first = ctx.required_input(0);
    const std::vector<int64_t> s0 = first.shape();
    const int64_t rank = static_cast<int64_t>(s0.size());
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, rank, "Concat"));
    std::vector<int64_t> out = s0;
    out[axis] = 0;
    for (size_t i = 0; i < count; ++i) {
      sdk::ConstTensor t = ctx.required_input(i);
      const std::vector<int64_t> s = t.shape();
      if (t.dtype() != first.dtype()) fail_op("Concat", "input types differ");
      bool ok = s.size() == s0.size();
      for (size_t d = 0; ok && d < s.size(); ++d) ok = d == axis || s[d] == s0[d];
      if (!ok)
        fail_op("Concat", "input " + std::to_string(i) + " shape " + shape_text(s) + " does not match " +
                              shape_text(s0) + " off axis " + std::to_string(axis));
      out[axis] = sdk::checked_add(out[axis], s[axis], "cuda Concat output");
    }
    sdk::Tensor y = ctx.output(0, out, first.dtype());
    if (sdk::checked_element_count(out, "cuda Concat output") == 0) return;
    const size_t bytes = element_bytes(first.dtype());
    const int64_t outer = product(s0, 0, axis, "cuda Concat"), inner = product(s0, axis + 1, s0.size(), "cuda Concat");
    const int64_t out_row = sdk::checked_mul(out[axis], inner, "cuda Concat");
    int64_t col = 0;  // offset of the current input in an output row
    for (size_t i = 0; i < count; ++i) {
      sdk::ConstTensor t = ctx.input(i);
      const int64_t row = t.dim(axis) * inner;
      check_movement(launch_rows_copy(bytes, t.raw_data(), row, byte_at(y.raw_mutable_data(), col, bytes), out_row,
                                      outer, row, stream_of(ctx)),
                     "Concat", first.dtype());
      col += row;
    }
  }

 private:
  int64_t axis_;
};

class SplitKernel {
 public:
  SplitKernel(const sdk::Node& node, const EpContext&)
      : opset_(node.opset()), axis_(node.attr_int("axis", 0)), split_(node.attr_ints("split")),
        equal_chunks_(node.has_attr("num_outputs")) {
    for (size_t i = 0; i < node.output_count(); ++i) present_.push_back(!node.output_name(i).empty());
  }
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(in.size()), "Split"));
    const int64_t n_out = static_cast<int64_t>(ctx.output_count());
    std::vector<int64_t> sizes;
    if (opset_ >= 13 && ctx.input(1).exists()) sizes = required_host_ints(ctx, 1, "Split", "split");
    else if (opset_ < 13) sizes = split_;
    const int64_t dim = in[axis];
    if (sizes.empty()) {
      if (n_out <= 0) fail_op("Split", "node has no outputs");
      if (equal_chunks_) {  // opset 18 num_outputs: the last chunk may be smaller
        const int64_t chunk = dim / n_out + (dim % n_out != 0 ? 1 : 0);
        for (int64_t i = 0; i < n_out; ++i)
          sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - std::min(dim, i * chunk))));
      } else {
        if (dim % n_out != 0)
          fail_op("Split", "dimension " + std::to_string(dim) + " is not divisible into " + std::to_string(n_out) +
                               " equal parts");
        sizes.assign(static_cast<size_t>(n_out), dim / n_out);
      }
    }
    if (static_cast<int64_t>(sizes.size()) != n_out)
      fail_op("Split", std::to_string(sizes.size()) + " split sizes for " + std::to_string(n_out) + " outputs");
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) fail_op("Split", "negative split size");
      total = sdk::checked_add(total, s, "cuda Split sizes");
    }
    if (total != dim)
      fail_op("Split", "split sizes sum to " + std::to_string(total) + ", dimension is " + std::to_string(dim));
    const size_t bytes = element_bytes(x.dtype());
    const int64_t outer = product(in, 0, axis, "cuda Split"), inner = product(in, axis + 1, in.size(), "cuda Split");
    const int64_t in_row = sdk::checked_mul(dim, inner, "cuda Split");
    int64_t col = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<int64_t> s = in;
      s[axis] = sizes[i];
      const int64_t row = sizes[i] * inner;
      if (i < present_.size() && present_[i]) {
        sdk::Tensor y = ctx.output(i, s, x.dtype());
        check_movement(launch_rows_copy(bytes, byte_at(x.raw_data(), col, bytes), in_row, y.raw_mutable_data(), row,
                                        outer, row, stream_of(ctx)),
                       "Split", x.dtype());
      }
      col += row;
    }
  }

 private:
  int64_t opset_, axis_;
  std::vector<int64_t> split_;
  bool equal_chunks_;
  std::vector<bool> present_;
};

// --- Expand, Tile ---

class ExpandKernel {
 public:
  ExpandKernel(const sdk::Node&, const EpContext&) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const std::vector<int64_t> target = required_host_ints(ctx, 1, "Expand", "shape");
    std::vector<int64_t> out;
    try {
      out = broadcast_shape(in, target);
    } catch (const std::invalid_argument& e) {
      fail_op("Expand", e.what());
    }
    const int64_t n = sdk::checked_element_count(out, "cuda Expand output");
    sdk::Tensor y = ctx.output(0, out, x.dtype());
    if (n == 0) return;
    StridedMap map;
    try {
      map = broadcast_map(out, in);
    } catch (const std::invalid_argument& e) {
      throw sdk::Error(std::string("cuda Expand: ") + e.what(), LOOM_STATUS_NOT_IMPLEMENTED);
    }
    check_movement(launch_strided_copy(element_bytes(x.dtype()), x.raw_data(), map, y.raw_mutable_data(), n,
                                       stream_of(ctx)),
                   "Expand", x.dtype());
  }
};

class TileKernel {
 public:
  TileKernel(const sdk::Node&, const EpContext&) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    require_rank_fits(in.size(), "Tile");
    const std::vector<int64_t> repeats = required_host_ints(ctx, 1, "Tile", "repeats");
    if (repeats.size() != in.size())
      fail_op("Tile", "repeats has " + std::to_string(repeats.size()) + " entries for rank " + std::to_string(in.size()));
    TileMap map;
    map.rank = static_cast<int>(in.size());
    const std::vector<int64_t> st = contiguous_strides(in);
    std::vector<int64_t> out(in.size());
    for (size_t d = 0; d < in.size(); ++d) {
      if (repeats[d] < 0) fail_op("Tile", "negative repeat");
      out[d] = sdk::checked_mul(in[d], repeats[d], "cuda Tile output");
      map.out_dims[d] = out[d];
      map.in_dims[d] = in[d];
      map.in_strides[d] = st[d];
    }
    const int64_t n = sdk::checked_element_count(out, "cuda Tile output");
    sdk::Tensor y = ctx.output(0, out, x.dtype());
    check_movement(launch_tile(element_bytes(x.dtype()), x.raw_data(), map, y.raw_mutable_data(), n, stream_of(ctx)),
                   "Tile", x.dtype());
  }
};

}  // namespace

void register_layout_kernels(KernelTable& t) {
  const std::vector<int32_t>& all = kAllFixedTypes;
  t.add<ConcatKernel>("", "Concat", 4, kOpen, {{"T", all}});
  t.add<SplitKernel>("", "Split", 2, 12, {{"T", all}});
  t.add<SplitKernel>("", "Split", 13, kOpen, {{"T", all}}).input_on_host(1);
  t.add<ExpandKernel>("", "Expand", 8, kOpen, {{"T", all}}, rank_fits).input_on_host(1);
  t.add<TileKernel>("", "Tile", 6, kOpen, {{"T", all}}, rank_fits).input_on_host(1);
}

}  // namespace loom::cuda
