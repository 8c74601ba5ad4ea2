// MatMul (numpy semantics: 1-D operands, broadcast batch dims) and Gemm
// (transposes, alpha, beta, C) as oneDNN matmul with post-op chains.
// Constant weights get format_tag::any and are packed once per program;
// one row times a large constant matrix is a GEMV step instead (ops/gemv.h).
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/gemv.h"
#include "ops/op_builders.h"
#include "ops/post_ops.h"

namespace loom::onednn {
namespace {

using dnnl::memory;

std::vector<int64_t> pad_front(std::vector<int64_t> d, size_t rank) {
  d.insert(d.begin(), rank - d.size(), 1);
  return d;
}

memory::desc strided_2d(int64_t rows, int64_t cols, bool transposed) {
  // A (rows x cols) matrix stored row-major, or its transpose's bytes.
  const std::vector<int64_t> strides = transposed ? std::vector<int64_t>{1, rows} : std::vector<int64_t>{cols, 1};
  return memory::desc({rows, cols}, memory::data_type::f32, strides);
}

struct MatmulOperands {
  ValueId src, weights;
  std::optional<ValueId> bias;
  std::vector<int64_t> mm_dims, onnx_dims;  // dst as oneDNN sees it / as ONNX defines it
  // The batch dims are folded into the rows: mm_dims is {rows, N} for an
  // ONNX result of onnx_dims (same element order).
  bool rows_folded = false;
};

// Operand `v` of a post-op on an ONNX result of dims `onnx` (rank >= 3)
// folded to {rows, N}: a view of {1 or rows, 1 or N}, or nullopt when its
// broadcast does not survive the folding (it varies along some batch dims only).
std::optional<ValueId> fold_rows(ProgramBuilder& b, ValueId v, const std::vector<int64_t>& onnx, int64_t rows) {
  std::vector<int64_t> d = b.dims(v);
  if (d.size() > onnx.size()) return std::nullopt;
  d.insert(d.begin(), onnx.size() - d.size(), 1);
  bool all_ones = true, all_full = true;
  for (size_t i = 0; i + 1 < onnx.size(); ++i) {
    all_ones &= d[i] == 1;
    all_full &= d[i] == onnx[i];
  }
  if (!all_ones && !all_full) return std::nullopt;
  return b.view(v, {all_ones ? 1 : rows, d.back()});
}

size_t emit(ProgramBuilder& b, const NodeSpec& n, const Chain& chain, const MatmulOperands& m) {
  // One row times a large constant matrix: streamed by a GEMV step (the
  // chain's nodes are then built on their own, cheap on one row).
  if (m.mm_dims.size() == 2 && m.mm_dims[0] == 1) {
    if (auto dst = build_gemv(b, m.src, m.weights, m.bias, m.onnx_dims, n.outputs[0], n.label()))
      return finish_chain(b, n, chain, {}, 0, *dst);
  }
  // Post-ops are planned on ONNX dims; with 1-D operands those differ from
  // the primitive's dims, and the chain is then built standalone. With the
  // batch folded into rows, each operand is folded too, and the chain stops
  // at the first that cannot be.
  const bool same_dims = m.mm_dims == m.onnx_dims;
  auto ops = same_dims || m.rows_folded ? plan_post_ops(b, chain, n.outputs[0], m.onnx_dims, true) : std::vector<PostOp>{};
  if (m.rows_folded) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == PostOp::kEltwise) continue;
      std::optional<ValueId> folded = fold_rows(b, ops[i].operand, m.onnx_dims, m.mm_dims[0]);
      if (!folded) {
        const size_t cut = ops[i].node_index;
        while (!ops.empty() && ops.back().node_index >= cut) ops.pop_back();
        break;
      }
      ops[i].operand = *folded;
      ops[i].operand_desc = b.desc(*folded);
    }
  }
  const bool pack_weights = b.is_constant(m.weights);
  size_t used = 0;
  const memory::desc dst_desc = plain_desc(m.mm_dims);
  auto pd = create_with_post_ops<dnnl::matmul::primitive_desc>(b, ops, used, dst_desc,
                                                               [&](const dnnl::primitive_attr& attr, const memory::desc& dst) {
    const memory::desc wei = pack_weights ? memory::desc(b.dims(m.weights), memory::data_type::f32, memory::format_tag::any)
                                          : b.desc(m.weights);
    if (m.bias) {
      dnnl::matmul::desc d(b.desc(m.src), wei, b.desc(*m.bias), dst);
      return dnnl::matmul::primitive_desc(d, attr, b.engine());
    }
    dnnl::matmul::desc d(b.desc(m.src), wei, dst);
    return dnnl::matmul::primitive_desc(d, attr, b.engine());
  });
  ValueId out, dst;
  if (same_dims) {
    out = dst = sum_destination(b, ops, used, dst_desc, m.mm_dims, result_name(n, chain, ops, used));
  } else if (m.rows_folded) {
    dst = sum_destination(b, ops, used, dst_desc, m.mm_dims, result_name(n, chain, ops, used));
    out = b.alias(dst, plain_desc(m.onnx_dims), m.onnx_dims);
  } else {
    out = b.new_value(plain_desc(m.onnx_dims), m.onnx_dims, result_name(n, chain, ops, used));
    dst = b.alias(out, plain_desc(m.mm_dims), m.mm_dims);
  }
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC, b.require(m.src, pd.src_desc())},
                                               {DNNL_ARG_WEIGHTS, b.require(m.weights, pd.weights_desc())},
                                               {DNNL_ARG_DST, dst}};
  if (m.bias) args.emplace_back(DNNL_ARG_BIAS, b.require(*m.bias, pd.bias_desc()));
  bind_post_ops(b, ops, used, dst, args, n.label());
  b.add_step(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc(), n.label());
  return finish_chain(b, n, chain, ops, used, out);
}

}  // namespace

size_t build_matmul(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  const ValueId a = b.value_of(n.inputs[0]), w = b.value_of(n.inputs[1]);
  std::vector<int64_t> da = b.dims(a), dw = b.dims(w);
  if (da.empty() || dw.empty()) n.fail("operands must have rank >= 1");
  if (da.size() > 6 || dw.size() > 6) n.fail("operand ranks must be at most 6");
  const bool a_vector = da.size() == 1, w_vector = dw.size() == 1;
  if (a_vector) da.insert(da.begin(), 1);
  if (w_vector) dw.push_back(1);
  const size_t rank = std::max(da.size(), dw.size());
  da = pad_front(da, rank);
  dw = pad_front(dw, rank);
  if (da[rank - 1] != dw[rank - 2])
    n.fail("inner dimensions differ (" + std::to_string(da[rank - 1]) + " vs " + std::to_string(dw[rank - 2]) + ")");
  MatmulOperands m;
  std::vector<int64_t> batch;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (da[i] != dw[i] && da[i] != 1 && dw[i] != 1) n.fail("batch dimensions do not broadcast");
    batch.push_back(std::max(da[i], dw[i]));
    if (da[i] == 0 || dw[i] == 0) n.fail("empty batch dimension");
  }
  m.mm_dims = batch;
  m.mm_dims.push_back(da[rank - 2]);
  m.mm_dims.push_back(dw[rank - 1]);
  m.onnx_dims = batch;
  if (!a_vector) m.onnx_dims.push_back(da[rank - 2]);
  if (!w_vector) m.onnx_dims.push_back(dw[rank - 1]);
  // Constant weights without batch dims: fold the batch into rows. oneDNN
  // 2.6 packs weights (format any) only for 2-D matmuls; plain weights are
  // repacked inside every execution (BERT-base's 768x3072 layers: 75 vs
  // 116 GFLOP/s on one core).
  bool weight_batch = false;
  for (size_t i = 0; i + 2 < rank; ++i) weight_batch |= dw[i] != 1;
  if (rank > 2 && !weight_batch && !w_vector && b.is_constant(w)) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < rank; ++i) rows *= da[i];
    m.rows_folded = true;
    m.mm_dims = {rows, dw[rank - 1]};
    m.src = b.view(a, {rows, da[rank - 1]});
    m.weights = b.view(w, {dw[rank - 2], dw[rank - 1]});
    return emit(b, n, chain, m);
  }
  m.src = b.view(a, da);
  m.weights = b.view(w, dw);
  return emit(b, n, chain, m);
}

size_t build_gemm(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  const ValueId a = b.value_of(n.inputs[0]);
  ValueId w = b.value_of(n.inputs[1]);
  const bool trans_a = n.attr_int("transA", 0) != 0, trans_b = n.attr_int("transB", 0) != 0;
  const float alpha = n.attr_float("alpha", 1.f), beta = n.attr_float("beta", 1.f);
  const auto& da = b.dims(a);
  const auto& dw = b.dims(w);
  if (da.size() != 2 || dw.size() != 2) n.fail("A and B must be matrices");
  const int64_t m_rows = trans_a ? da[1] : da[0], k = trans_a ? da[0] : da[1];
  const int64_t k_b = trans_b ? dw[1] : dw[0], n_cols = trans_b ? dw[0] : dw[1];
  if (k != k_b) n.fail("inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(k_b) + ")");
  MatmulOperands m;
  m.mm_dims = m.onnx_dims = {m_rows, n_cols};
  if (alpha != 1.f) {
    if (!b.is_constant(w)) n.fail("alpha != 1 needs a constant B");
    std::vector<float> data = b.constant_data(w);
    for (float& v : data) v *= alpha;
    w = b.new_constant(data, dw);
  }
  m.src = b.alias(b.plain(a), strided_2d(m_rows, k, trans_a), {m_rows, k});
  m.weights = b.alias(b.plain(w), strided_2d(k, n_cols, trans_b), {k, n_cols});
  if (n.has_input(2)) {
    ValueId c = b.value_of(n.inputs[2]);
    std::vector<int64_t> dc = pad_front(b.dims(c), 2);
    if ((dc[0] != 1 && dc[0] != m_rows) || (dc[1] != 1 && dc[1] != n_cols)) n.fail("C does not broadcast to (M, N)");
    if (beta != 1.f) {
      if (!b.is_constant(c)) n.fail("beta != 1 needs a constant C");
      std::vector<float> data = b.constant_data(c);
      for (float& v : data) v *= beta;
      c = b.new_constant(data, b.dims(c));
    }
    if (beta != 0.f) m.bias = b.view(c, dc);
  }
  return emit(b, n, chain, m);
}

}  // namespace loom::onednn
