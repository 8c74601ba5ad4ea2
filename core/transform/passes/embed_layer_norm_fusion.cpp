// EmbedLayerNormalization fusion (extended): the BERT embedding block as
// torch.onnx.export writes it (opsets 14 and 17) becomes com.microsoft
// EmbedLayerNormalization(ids, segment_ids?, word, position, segment?, gamma, beta):
//   word = Gather(word_table, input_ids)                  input_ids [B, S], runtime
//   pos  = Gather(pos_table, Slice(arange[1, L], 0, S))   positions 0..S-1
//   seg  = Gather(seg_table, token_type_ids)              optional
//   y    = LayerNormalization(word + pos (+ seg))          last axis, any Add order
// (or SkipLayerNormalization(a, b, gamma, beta) over the same leaves, should
// skip_layer_norm_fusion have run first). S is proven to be input_ids' dim 1
// by the Slice's end: Unsqueeze(Gather(Shape(input_ids), 1)), Shape(input_ids)
// with start 1 / end 2, or a constant equal to a static dim 1; a constant
// index [1, S] / [S] (a Slice already folded) needs a static S too, as does
// a float constant [1, S, H] summand (a whole Gather already folded: its rows
// are the positions 0..S-1).
//
// Token types given as a constant (HF's registered zeros buffer, sliced like
// the positions) are folded into a new position table, row s = pos[s] +
// seg[t[s]] (one rounding apart from the model's (w + p) + s), as are dense
// constant summands. Token types read
// at run time become segment_ids. Ids that are int64 get a Cast to int32, which
// ORT's kernel requires. The mask input is left empty (the attention mask keeps
// its own Cast) and mask_index is not produced.
//
// The fused op reads position rows up to the table's size, where the model's
// Slice clamps at L: for L < S <= rows the model fails and the fused op runs.
// Every intermediate (Gathers, partial sums) must be read only inside the block.
#include <optional>

#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

struct EmbedMatch {
  std::vector<ir::NodeId> nodes;
  std::string ids, seg_ids, word, pos, seg, gamma, beta, y, name;
  Tensor folded_pos;  // set when constant token types were folded into the positions
  float epsilon = 1e-5f;
};

bool int_constant_is(const ir::Graph& g, const std::string& value, const std::vector<int64_t>& want) {
  auto v = int_constant(g, value);
  return v && *v == want;
}

// input_ids' static dim 1 (S), or -1.
int64_t static_seq_len(const ir::Graph& g, const std::string& ids) {
  const ir::ValueType* t = g.type_of(ids);
  return t && t->has_shape && t->dims.size() == 2 ? t->dims[1].value : -1;
}

// `v` is the 1-D tensor [S], S = dim 1 of `ids` (rank 2).
bool is_seq_len(const GraphMatcher& m, const std::string& v, const std::string& ids) {
  const ir::Graph& g = m.graph();
  const int64_t s = static_seq_len(g, ids);
  if (s >= 0 && int_constant_is(g, v, {s})) return true;
  const ir::Node* p = m.producer(v);
  if (!p) return false;
  if (GraphMatcher::is(*p, "Shape", 1)) {  // opset 15: Shape(ids, start=1, end=2)
    const ir::Attribute* st = p->find_attribute("start");
    const ir::Attribute* en = p->find_attribute("end");
    return p->inputs[0] == ids && st && en && (st->i == 1 || st->i == -1) && en->i >= 2;  // end clamps to the rank
  }
  // Unsqueeze(Gather(Shape(ids), 1), [0]): axes as input from opset 13.
  const bool unsqueeze =
      p->op_type == "Unsqueeze" && p->domain.empty() && p->outputs.size() == 1 &&
      ((p->inputs.size() == 2 && int_constant_is(g, p->inputs[1], {0})) ||
       (p->inputs.size() == 1 && p->find_attribute("axes") && p->find_attribute("axes")->ints == std::vector<int64_t>{0}));
  if (!unsqueeze) return false;
  const ir::Node* gather = m.producer(p->inputs[0]);
  if (!gather || !GraphMatcher::is(*gather, "Gather", 2)) return false;
  if (const ir::Attribute* a = gather->find_attribute("axis"); a && a->i != 0) return false;
  auto idx = m.constant_dims(gather->inputs[1]);
  auto idx_v = int_constant(g, gather->inputs[1]);
  if (!idx || !idx->empty() || !idx_v || ((*idx_v)[0] != 1 && (*idx_v)[0] != -1)) return false;
  const ir::Node* shape = m.producer(gather->inputs[0]);
  return shape && GraphMatcher::is(*shape, "Shape", 1) && shape->inputs[0] == ids && !shape->find_attribute("start") &&
         !shape->find_attribute("end");
}

// The index values for positions s = 0, 1, ... (valid for s < size) of a
// constant gather index broadcast over the batch: a constant [1, S] / [S]
// with S static, or Slice(constant [1, L] / [L], 0, S) on the last axis.
std::optional<std::vector<int64_t>> constant_positions(const GraphMatcher& m, const std::string& idx,
                                                       const std::string& ids) {
  const ir::Graph& g = m.graph();
  if (auto dims = m.constant_dims(idx)) {
    const int64_t s = static_seq_len(g, ids);
    if (s < 0 || (*dims != Dims{1, s} && *dims != Dims{s})) return std::nullopt;
    return int_constant(g, idx);
  }
  const ir::Node* sl = m.producer(idx);
  if (!sl || sl->op_type != "Slice" || !sl->domain.empty() || sl->inputs.size() < 3 || sl->outputs.size() != 1)
    return std::nullopt;
  auto dims = m.constant_dims(sl->inputs[0]);
  if (!dims || dims->empty() || dims->size() > 2 || (dims->size() == 2 && (*dims)[0] != 1)) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(dims->size());
  if (!int_constant_is(g, sl->inputs[1], {0}) || !is_seq_len(m, sl->inputs[2], ids)) return std::nullopt;
  const bool has_axes = sl->inputs.size() > 3 && !sl->inputs[3].empty();
  if (has_axes ? !(int_constant_is(g, sl->inputs[3], {rank - 1}) || int_constant_is(g, sl->inputs[3], {-1}))
               : rank != 1)
    return std::nullopt;
  if (sl->inputs.size() > 4 && !sl->inputs[4].empty() && !int_constant_is(g, sl->inputs[4], {1})) return std::nullopt;
  return int_constant(g, sl->inputs[0]);
}

// A summand: Gather(table, idx), or (dense) a float constant [1, S, H] /
// [S, H] already holding the rows for positions 0..S-1 (a Gather of
// constant indices that constant folding evaluated, when S is static).
struct Leaf {
  std::string table, idx;
  bool dense = false;
};

// Rows of a table [rows, H] or of a dense leaf [1, rows, H].
int64_t rows_of(const GraphMatcher& m, const std::string& table) {
  const Dims d = *m.constant_dims(table);
  return d[d.size() - 2];
}

// The operands of an Add tree read only by its parent (intermediates folded
// into `nodes`), each a Gather(float table [rows, H], idx) read only there
// or a dense constant.
bool collect_leaves(const GraphMatcher& m, const std::string& v, const ir::Node* parent, std::vector<Leaf>& leaves,
                    std::vector<ir::NodeId>& nodes) {
  if (leaves.size() >= 3) return false;
  if (auto cd = m.constant_dims(v)) {
    if (!m.is_float(v) || cd->size() < 2 || cd->size() > 3 || (cd->size() == 3 && (*cd)[0] != 1)) return false;
    leaves.push_back({v, "", true});
    return true;
  }
  const ir::Node* p = m.producer(v);
  if (!p || m.sole_consumer(v) != parent || leaves.size() >= 3) return false;
  if (GraphMatcher::is(*p, "Add", 2)) {
    nodes.push_back(p->id);
    return collect_leaves(m, p->inputs[0], p, leaves, nodes) && collect_leaves(m, p->inputs[1], p, leaves, nodes);
  }
  if (!GraphMatcher::is(*p, "Gather", 2)) return false;
  if (const ir::Attribute* a = p->find_attribute("axis"); a && a->i != 0) return false;
  auto dims = m.constant_dims(p->inputs[0]);
  if (!dims || dims->size() != 2 || !m.is_float(p->inputs[0])) return false;
  nodes.push_back(p->id);
  leaves.push_back({p->inputs[0], p->inputs[1], false});
  return true;
}

bool same_dim(const DimInfo& a, const DimInfo& b) {
  return (a.value >= 0 && a.value == b.value) || (a.value < 0 && !a.symbol.empty() && a.symbol == b.symbol);
}

// A runtime int32/int64 [B, S] ids value (not a constant nor a Slice of one).
const ir::ValueType* runtime_ids_type(const GraphMatcher& m, const std::string& v) {
  if (m.constant_dims(v)) return nullptr;
  const ir::Node* p = m.producer(v);
  if (p && p->op_type == "Slice" && p->domain.empty() && !p->inputs.empty() && m.constant_dims(p->inputs[0]))
    return nullptr;
  const ir::ValueType* t = m.graph().type_of(v);
  if (!t || (t->dtype != DType::kInt64 && t->dtype != DType::kInt32) || !t->has_shape || t->dims.size() != 2)
    return nullptr;
  return t;
}

std::optional<EmbedMatch> match(const GraphMatcher& m, const ir::Node& norm) {
  const ir::Graph& g = m.graph();
  std::vector<std::string> sum_operands;
  EmbedMatch out;
  if (norm.op_type == "LayerNormalization" && norm.domain.empty() && norm.inputs.size() >= 2 &&
      norm.outputs.size() == 1) {
    if (const ir::Attribute* a = norm.find_attribute("axis"); a && a->i != -1 && a->i != 2) return std::nullopt;
    if (const ir::Attribute* st = norm.find_attribute("stash_type"); st && st->i != 1) return std::nullopt;
    sum_operands = {norm.inputs[0]};
    out.epsilon = 1e-5f;
  } else if (norm.op_type == "SkipLayerNormalization" && norm.domain == kMicrosoftDomain &&
             (norm.inputs.size() == 4 || (norm.inputs.size() == 5 && norm.inputs[4].empty()))) {
    for (size_t i = 1; i < norm.outputs.size(); ++i)
      if (!norm.outputs[i].empty()) return std::nullopt;
    sum_operands = {norm.inputs[0], norm.inputs[1]};
    out.epsilon = 1e-12f;
  } else {
    return std::nullopt;
  }
  if (const ir::Attribute* e = norm.find_attribute("epsilon")) out.epsilon = e->f;
  const ir::ValueType* st = g.type_of(sum_operands[0]);
  if (norm.op_type == "LayerNormalization" && (!st || !st->has_shape || st->dims.size() != 3)) return std::nullopt;
  std::vector<Leaf> leaves;
  for (const std::string& v : sum_operands)
    if (!collect_leaves(m, v, &norm, leaves, out.nodes)) return std::nullopt;
  if (leaves.size() < 2) return std::nullopt;

  // Runtime leaves: the word ids (first) and the segment ids; the rest are
  // constant indices that need the word ids to prove their length.
  std::vector<const Leaf*> runtime, constant;
  for (const Leaf& l : leaves) (runtime_ids_type(m, l.idx) ? runtime : constant).push_back(&l);
  if (runtime.empty() || runtime.size() > 2 || constant.empty()) return std::nullopt;
  if (runtime.size() == 2 && m.constant_dims(runtime[1]->table)->front() > m.constant_dims(runtime[0]->table)->front())
    std::swap(runtime[0], runtime[1]);  // the larger table is the vocabulary (the sum is symmetric anyway)
  out.ids = runtime[0]->idx;
  out.word = runtime[0]->table;
  const ir::ValueType* ids_t = g.type_of(out.ids);
  const int64_t h = m.constant_dims(out.word)->back();
  for (const Leaf& l : leaves)
    if (m.constant_dims(l.table)->back() != h) return std::nullopt;
  if (runtime.size() == 2) {
    const ir::ValueType* seg_t = g.type_of(runtime[1]->idx);
    if (!same_dim(seg_t->dims[0], ids_t->dims[0]) || !same_dim(seg_t->dims[1], ids_t->dims[1])) return std::nullopt;
    out.seg_ids = runtime[1]->idx;
    out.seg = runtime[1]->table;
  }
  // The sum must be the word embedding's shape [B, S, H] (no other broadcast).
  if (norm.op_type == "LayerNormalization") {
    if (!same_dim(st->dims[0], ids_t->dims[0]) || !same_dim(st->dims[1], ids_t->dims[1]) || st->dims[2].value != h)
      return std::nullopt;
  }

  // One constant leaf with positions 0, 1, ... is the position embedding;
  // others (constant token types) fold into it.
  std::vector<std::vector<int64_t>> values;
  for (const Leaf* l : constant) {
    std::optional<std::vector<int64_t>> v;
    if (l->dense) {  // rows for positions 0..S-1: S must be input_ids' static dim 1
      const int64_t s = static_seq_len(g, out.ids);
      if (s <= 0 || rows_of(m, l->table) != s) return std::nullopt;
      v.emplace(static_cast<size_t>(s));
      for (int64_t i = 0; i < s; ++i) (*v)[static_cast<size_t>(i)] = i;
    } else {
      v = constant_positions(m, l->idx, out.ids);
    }
    if (!v || v->empty()) return std::nullopt;
    values.push_back(std::move(*v));
  }
  size_t pos_leaf = constant.size();
  for (size_t i = 0; i < constant.size() && pos_leaf == constant.size(); ++i) {
    bool arange = true;
    for (size_t s = 0; s < values[i].size() && arange; ++s) arange = values[i][s] == static_cast<int64_t>(s);
    if (arange) pos_leaf = i;
  }
  if (pos_leaf == constant.size()) return std::nullopt;
  out.pos = constant[pos_leaf]->table;
  if (constant.size() > 1 || constant[pos_leaf]->dense) {
    const std::vector<float> pos = *m.float_constant(out.pos);
    int64_t rows = std::min<int64_t>(rows_of(m, out.pos), static_cast<int64_t>(values[pos_leaf].size()));
    for (size_t i = 0; i < constant.size(); ++i)
      if (i != pos_leaf) rows = std::min<int64_t>(rows, static_cast<int64_t>(values[i].size()));
    std::vector<float> folded(pos.begin(), pos.begin() + rows * h);
    for (size_t i = 0; i < constant.size(); ++i) {
      if (i == pos_leaf) continue;
      const std::vector<float> table = *m.float_constant(constant[i]->table);
      const int64_t table_rows = rows_of(m, constant[i]->table);
      for (int64_t s = 0; s < rows; ++s) {
        const int64_t r = values[i][static_cast<size_t>(s)];
        if (r < 0 || r >= table_rows) return std::nullopt;
        for (int64_t k = 0; k < h; ++k) folded[static_cast<size_t>(s * h + k)] += table[static_cast<size_t>(r * h + k)];
      }
    }
    out.folded_pos = Tensor::from_vector(DType::kFloat, {rows, h}, folded);
  }

  const size_t gi = norm.op_type == "LayerNormalization" ? 1 : 2;  // gamma's input index
  auto gamma_dims = m.constant_dims(norm.inputs[gi]);
  if (!gamma_dims || *gamma_dims != Dims{h} || !m.is_float(norm.inputs[gi])) return std::nullopt;
  out.gamma = norm.inputs[gi];
  if (norm.inputs.size() > gi + 1 && !norm.inputs[gi + 1].empty()) {
    auto beta_dims = m.constant_dims(norm.inputs[gi + 1]);
    if (!beta_dims || *beta_dims != Dims{h}) return std::nullopt;
    out.beta = norm.inputs[gi + 1];
  }
  out.nodes.push_back(norm.id);
  out.y = norm.outputs[0];
  out.name = norm.name.empty() ? out.y : norm.name;
  return out;
}

// `ids` as int32 [B, S]: itself, an existing Cast to int32, or a new Cast.
std::string int32_ids(const ir::Graph& g, GraphPatch& patch, const std::string& ids) {
  const ir::ValueType* t = g.type_of(ids);
  if (t->dtype == DType::kInt32) return ids;
  for (const auto& n : g.nodes()) {
    if (!GraphMatcher::is(*n, "Cast", 1) || n->inputs[0] != ids) continue;
    const ir::Attribute* to = n->find_attribute("to");
    if (to && to->i == static_cast<int64_t>(DType::kInt32)) return n->outputs[0];
  }
  const std::string cast = patch.fresh_name(ids + "/int32");
  ir::Node c = fused_node(g, "Cast", "", {ids}, {cast}, patch.fresh_name(ids + "/CastInt32"));
  set_int_attr(c, "to", static_cast<int64_t>(DType::kInt32));
  ir::ValueType ct = *t;
  ct.dtype = DType::kInt32;
  patch.set_type(cast, ct);
  patch.add_node(std::move(c));
  return cast;
}

class EmbedLayerNormFusion : public Pass {
 public:
  std::string name() const override { return "embed_layer_norm_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    std::vector<EmbedMatch> matches = disjoint_matches<EmbedMatch>(graph, match);
    for (EmbedMatch& e : matches) {
      GraphPatch patch(graph, name() + " at '" + e.name + "'");
      const std::string ids = int32_ids(graph, patch, e.ids);
      const std::string seg_ids = e.seg_ids.empty() ? "" : int32_ids(graph, patch, e.seg_ids);
      const std::string pos =
          e.folded_pos.dtype() == DType::kUndefined ? e.pos : patch.add_initializer(e.name + "/position_segment", e.folded_pos);
      std::string beta = e.beta;
      if (beta.empty()) {
        const int64_t h = graph.initializers.at(e.gamma).dims()[0];
        beta = patch.add_initializer(e.name + "/beta", Tensor::from_vector(DType::kFloat, {h}, std::vector<float>(h)));
      }
      ir::Node n = fused_node(graph, "EmbedLayerNormalization", kMicrosoftDomain,
                              {ids, seg_ids, e.word, pos, e.seg, e.gamma, beta}, {e.y},
                              patch.fresh_name(e.name + "/EmbedLayerNorm"));
      set_float_attr(n, "epsilon", e.epsilon);
      replace_with_fused(patch, graph, ctx, changed, e.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_embed_layer_norm_fusion() { return std::make_unique<EmbedLayerNormFusion>(); }

}  // namespace loom::transform
