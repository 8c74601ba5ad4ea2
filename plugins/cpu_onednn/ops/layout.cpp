// Concat, Reshape/Flatten (a new view of plain data, no compute) and
// Transpose (a reorder from a permuted-strides view).
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/op_builders.h"
#include "ops/operand_layout.h"

namespace loom::onednn {

using dnnl::memory;

size_t build_concat(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  std::vector<ValueId> srcs;
  for (const std::string& in : n.inputs) srcs.push_back(b.value_of(in));
  std::vector<int64_t> dst_dims = b.dims(srcs[0]);
  const int64_t rank = static_cast<int64_t>(dst_dims.size());
  int64_t axis = n.attr_int("axis", n.opset >= 4 ? std::numeric_limits<int64_t>::max() : 1);
  if (axis == std::numeric_limits<int64_t>::max()) n.fail("lacks required attribute 'axis'");
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) n.fail("axis out of range");
  dst_dims[axis] = 0;
  for (ValueId s : srcs) {
    const auto& d = b.dims(s);
    if (static_cast<int64_t>(d.size()) != rank) n.fail("inputs differ in rank");
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis && d[i] != b.dims(srcs[0])[i]) n.fail("inputs differ outside the concat axis");
    dst_dims[axis] += d[axis];
  }
  auto make = [&](const std::vector<ValueId>& in) {
    std::vector<memory::desc> descs;
    for (ValueId s : in) descs.push_back(b.desc(s));
    return dnnl::concat::primitive_desc(memory::desc(dst_dims, memory::data_type::f32, memory::format_tag::any),
                                        static_cast<int>(axis), descs, b.engine(), b.attr());
  };
  // One layout for all inputs (that of the first one computed in this
  // partition): oneDNN's optimised concat needs it, mixed layouts run
  // `ref:any`. Partition inputs are reordered to it.
  ValueId like = srcs[0];
  for (ValueId s : srcs)
    if (b.produced_here(s)) {
      like = s;
      break;
    }
  dnnl::concat::primitive_desc pd;
  try {
    for (ValueId& s : srcs) s = b.require(s, desc_like(b.desc(like), b.dims(s)));
    pd = make(srcs);
  } catch (const dnnl::error&) {
    for (ValueId& s : srcs) s = b.plain(s);
    pd = make(srcs);
  }
  const ValueId dst = b.new_value(pd.dst_desc(), dst_dims, n.outputs[0]);
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_DST, dst}};
  for (size_t i = 0; i < srcs.size(); ++i) args.emplace_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), srcs[i]);
  b.add_step(dnnl::concat(pd), std::move(args), pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], dst);
  return 0;
}

namespace {

// Squeeze's / Unsqueeze's output dims for input dims `in`; fails naming the
// node on axes out of range, repeated, or (Squeeze) not of size 1.
std::vector<int64_t> squeezed_dims(const NodeSpec& n, const std::vector<int64_t>& in) {
  const std::optional<std::vector<int64_t>> given = n.ints_operand(1, "axes", 13);
  if (!given) n.fail("axes must be a constant");
  const std::vector<int64_t>& axes = *given;
  const bool squeeze = n.op_type == "Squeeze";
  const auto rank = static_cast<int64_t>(in.size() + (squeeze ? 0 : axes.size()));
  std::vector<bool> marked(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) n.fail("axis " + std::to_string(a) + " out of range");
    const auto k = static_cast<size_t>(a < 0 ? a + rank : a);
    if (marked[k]) n.fail("axis " + std::to_string(a) + " given twice");
    marked[k] = true;
  }
  std::vector<int64_t> out;
  if (squeeze) {
    for (size_t d = 0; d < in.size(); ++d) {
      const bool drop = axes.empty() ? in[d] == 1 : marked[d];
      if (drop && in[d] != 1) n.fail("squeezed axis " + std::to_string(d) + " has size " + std::to_string(in[d]));
      if (!drop) out.push_back(in[d]);
    }
    return out;
  }
  for (size_t d = 0, from = 0; d < static_cast<size_t>(rank); ++d) out.push_back(marked[d] ? 1 : in[from++]);
  return out;
}

}  // namespace

size_t build_reshape(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t> in = b.dims(x);
  std::vector<int64_t> out;
  if (n.op_type == "Identity") {
    out = in;
  } else if (n.op_type == "Squeeze" || n.op_type == "Unsqueeze") {
    out = squeezed_dims(n, in);
  } else if (n.op_type == "Flatten") {
    const int64_t rank = static_cast<int64_t>(in.size());
    int64_t axis = n.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) n.fail("axis out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in[i];
    out = {outer, inner};
  } else {
    auto it = n.small_constants.find(1);
    if (it == n.small_constants.end()) n.fail("the shape must be a small constant");
    const bool allow_zero = n.attr_int("allowzero", 0) != 0;
    int64_t known = 1;
    int infer = -1;
    for (size_t i = 0; i < it->second.size(); ++i) {
      int64_t v = static_cast<int64_t>(it->second[i]);
      if (v == 0 && !allow_zero) {
        if (i >= in.size()) n.fail("shape copies a dimension the input lacks");
        v = in[i];
      }
      if (v == -1) {
        if (infer >= 0) n.fail("more than one -1 in the shape");
        infer = static_cast<int>(i);
      } else if (v < 0) {
        n.fail("negative dimension in the shape");
      } else {
        known *= v;
      }
      out.push_back(v);
    }
    const int64_t total = element_count(in);
    if (infer >= 0) {
      if (known == 0 || total % known != 0) n.fail("cannot infer the -1 dimension");
      out[infer] = total / known;
    }
    if (element_count(out) != total) n.fail("the shape does not keep the element count");
  }
  b.define(n.outputs[0], b.view(x, out));
  return 0;
}

size_t build_transpose(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.plain(b.value_of(n.inputs[0]));
  const std::vector<int64_t> d = b.dims(x);
  const size_t rank = d.size();
  if (rank > 6) n.fail("rank " + std::to_string(rank) + " is above 6");
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank) n.fail("perm must list every axis");
  std::vector<bool> seen(rank, false);
  const memory::desc in_desc = b.desc(x);
  const auto in_strides = in_desc.data.format_desc.blocking.strides;
  std::vector<int64_t> out_dims, out_strides;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) n.fail("perm is not a permutation");
    seen[p] = true;
    out_dims.push_back(d[p]);
    out_strides.push_back(rank == 0 ? 1 : in_strides[p]);
  }
  if (rank == 0) {
    b.define(n.outputs[0], x);
    return 0;
  }
  const ValueId permuted = b.alias(x, memory::desc(out_dims, memory::data_type::f32, out_strides), out_dims);
  const ValueId dst = b.new_value(plain_desc(out_dims), out_dims, n.outputs[0]);
  b.add_reorder(permuted, dst, n.label());
  b.define(n.outputs[0], dst);
  return 0;
}

}  // namespace loom::onednn
