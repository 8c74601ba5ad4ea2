// Attention fusion (extended): the BERT self-attention block as
// torch.onnx.export writes it (opsets 14 and 17) becomes com.microsoft
// Attention(x, W, bias[, mask_index]):
//   q|k|v = Add(MatMul(x, Wq|Wk|Wv), bq|bk|bv)            (bias either side)
//   Q = Transpose(Reshape(q, [0, 0, N, H]), [0, 2, 1, 3])  V likewise
//   K^T = Transpose(Reshape(k, [0, 0, N, H]), [0, 2, 3, 1])
//   s = MatMul(Q, K^T) then Div(s, d) or Mul(s, c)        (optional)
//   s = Add(s, mask_bias)                                   (optional)
//   out = Reshape(Transpose(MatMul(Softmax(s, -1), V), [0, 2, 1, 3]), [0, 0, N * H])
// The scale is matched on the scores (after MatMul(Q, K^T)), the form both
// bert_base.onnx and bert_encoder.onnx use; a scale folded into Q before the
// MatMul is left unfused. `scale` is set only when it is not 1 / sqrt(H).
//
// mask_bias = Mul(Sub(1, Cast<float>(Unsqueeze..(mask))), C), the mask going
// [B, S] -> [B, 1, 1, S] (one Unsqueeze of axes [1, 2] or two of one axis,
// Cast before or after them). Attention takes the raw [B, S] mask as int32:
// one Cast(mask, to=INT32) is added per mask and reused by every layer (the
// mask-bias nodes are shared, so they are left to dead-code elimination).
// ORT (and the reference EP) replace a masked score by mask_filter_value = C
// where the model adds C: for C <= kMaxFilter the masked probabilities are 0
// in float either way. A row whose every key is masked differs (ORT: uniform;
// the model: softmax of the unmasked scores), as in ORT's own fusion. The
// mask must be integer or bool (a float 0.5 would cast to 0, not scale C),
// and [B, S] must equal x's first two dims. Like ORT's fusion this assumes
// an attention mask of 0s and 1s: Attention keeps every key whose mask is
// above 0, where the model would add (1 - m) * C, a large positive bias for
// m > 1.
//
// W = [Wq | Wk | Wv] ([D_in, 3 * N * H]) and bias = [bq | bk | bv] become new
// initializers; the old ones die with the MatMuls unless read elsewhere.
#include <algorithm>
#include <cmath>
#include <set>

#include "base/logging.h"
#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

// The mask bias must push masked scores this far down: exp(C) is then 0 in
// float, so replacing the score by C (ORT) equals adding C (the model).
constexpr float kMaxFilter = -1000.f;

struct AttentionMatch {
  std::vector<ir::NodeId> nodes;
  std::string x, wq, wk, wv, bq, bk, bv, mask, y, name;
  int64_t num_heads = 0, head_size = 0, d_in = 0;
  float scale = 0.f;  // 0: the default 1 / sqrt(H)
  float filter = -10000.f;
};

bool is_transpose(const ir::Node& n, const std::vector<int64_t>& perm) {
  if (!GraphMatcher::is(n, "Transpose", 1)) return false;
  const ir::Attribute* p = n.find_attribute("perm");
  return p != nullptr && p->ints == perm;
}

bool same_dim(const DimInfo& a, const DimInfo& b) {
  return (a.value >= 0 && a.value == b.value) || (a.value < 0 && !a.symbol.empty() && a.symbol == b.symbol);
}

// Reshape(v, shape) whose shape keeps v's first two dims ([B, S]) and splits
// or joins the rest into `tail` (0 entries in `tail` are free, returned).
// The leading entries are 0 (copy), or -1 / the known dim in one of them.
std::optional<std::vector<int64_t>> reshape_tail(const GraphMatcher& m, const ir::Node& r, size_t tail_rank) {
  if (!GraphMatcher::is(r, "Reshape", 2)) return std::nullopt;
  if (const ir::Attribute* a = r.find_attribute("allowzero"); a && a->i != 0) return std::nullopt;
  auto shape = int_constant(m.graph(), r.inputs[1]);
  if (!shape || shape->size() != 2 + tail_rank) return std::nullopt;
  const ir::ValueType* t = m.graph().type_of(r.inputs[0]);
  int wild = 0;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t s = (*shape)[i];
    const bool known = t && t->has_shape && t->dims.size() > i && t->dims[i].value > 0 && t->dims[i].value == s;
    if (s == -1) ++wild;
    else if (s != 0 && !known) return std::nullopt;
  }
  if (wild > 1) return std::nullopt;
  std::vector<int64_t> tail(shape->begin() + 2, shape->end());
  for (int64_t d : tail)
    if (d <= 0) return std::nullopt;
  return tail;
}

struct Projection {
  std::vector<ir::NodeId> nodes;  // MatMul, Add, Reshape, Transpose
  std::string x, w, b;
  int64_t n = 0, h = 0;
};

// Transpose(Reshape(Add(MatMul(x, W), b), [0, 0, N, H]), perm), every
// intermediate read only by the next step.
std::optional<Projection> projection(const GraphMatcher& m, const std::string& value,
                                     const std::vector<int64_t>& perm) {
  const ir::Node* tr = m.producer(value);
  if (!tr || !is_transpose(*tr, perm)) return std::nullopt;
  const ir::Node* rs = m.producer(tr->inputs[0]);
  if (!rs || m.sole_consumer(tr->inputs[0]) != tr) return std::nullopt;
  auto tail = reshape_tail(m, *rs, 2);
  if (!tail) return std::nullopt;
  const ir::Node* add = m.producer(rs->inputs[0]);
  if (!add || m.sole_consumer(rs->inputs[0]) != rs || !GraphMatcher::is(*add, "Add", 2)) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const std::string& mm_out = add->inputs[1 - k];
    const ir::Node* mm = m.producer(mm_out);
    if (!mm || !GraphMatcher::is(*mm, "MatMul", 2) || m.sole_consumer(mm_out) != add) continue;
    if (m.vector_operand(*add, "Add", mm_out) != add->inputs[k]) continue;
    auto wd = m.constant_dims(mm->inputs[1]);
    if (!wd || wd->size() != 2 || !m.is_float_constant(mm->inputs[1]) || !m.is_float(mm->inputs[0])) continue;
    if ((*wd)[1] != (*tail)[0] * (*tail)[1]) return std::nullopt;
    Projection p;
    p.nodes = {mm->id, add->id, rs->id, tr->id};
    p.x = mm->inputs[0];
    p.w = mm->inputs[1];
    p.b = add->inputs[k];
    p.n = (*tail)[0];
    p.h = (*tail)[1];
    return p;
  }
  return std::nullopt;
}

// Walks mask_bias = Mul(Sub(1, Cast<float>(Unsqueeze..(mask))), C) back to
// the raw mask; sets out.mask and out.filter. Nodes are not collected: the
// chain is shared by every layer.
bool match_mask(const GraphMatcher& m, const std::string& bias, AttentionMatch& out) {
  const ir::Node* mul = m.producer(bias);
  if (!mul || !GraphMatcher::is(*mul, "Mul", 2)) return false;
  for (size_t k = 0; k < 2; ++k) {
    const std::string& sub_out = mul->inputs[1 - k];
    auto c = m.scalar_operand(*mul, "Mul", sub_out);
    const ir::Node* sub = m.producer(sub_out);
    if (!c || !sub || !GraphMatcher::is(*sub, "Sub", 2)) continue;
    auto one = m.float_constant(sub->inputs[0]);
    if (!one || one->size() != 1 || (*one)[0] != 1.f || m.constant_dims(sub->inputs[0])->size() > 4) return false;
    if (!(*c <= kMaxFilter)) return false;
    // Back through Cast and Unsqueeze nodes to the raw mask, tracking where
    // the mask's two dims end up.
    std::string v = sub->inputs[1];
    std::vector<std::vector<int64_t>> unsqueezes;  // outermost first
    int casts = 0;
    for (int depth = 0; depth < 4; ++depth) {
      const ir::Node* p = m.producer(v);
      if (!p) break;
      if (GraphMatcher::is(*p, "Cast", 1)) {
        const ir::Attribute* to = p->find_attribute("to");
        if (!to || to->i != static_cast<int64_t>(DType::kFloat) || ++casts > 1) return false;
      } else if (p->op_type == "Unsqueeze" && p->domain.empty() && p->outputs.size() == 1) {
        std::optional<std::vector<int64_t>> axes;
        const ir::Attribute* attr = p->find_attribute("axes");
        if (p->inputs.size() == 2) axes = int_constant(m.graph(), p->inputs[1]);
        else if (p->inputs.size() == 1 && p->opset < 13 && attr) axes = attr->ints;
        if (!axes) return false;
        unsqueezes.push_back(*axes);
      } else {
        break;
      }
      v = p->inputs[0];
    }
    if (casts != 1) return false;
    const ir::ValueType* mt = m.graph().type_of(v);
    if (!mt || !mt->has_shape || mt->dims.size() != 2) return false;
    if (mt->dtype != DType::kInt64 && mt->dtype != DType::kInt32 && mt->dtype != DType::kBool) return false;
    std::vector<int> layout = {0, 1};  // 0 = B, 1 = S, -1 = an inserted 1
    for (auto it = unsqueezes.rbegin(); it != unsqueezes.rend(); ++it) {
      const int64_t rank = static_cast<int64_t>(layout.size() + it->size());
      std::vector<int64_t> axes = *it;
      for (int64_t& a : axes) {
        if (a < -rank || a >= rank) return false;
        if (a < 0) a += rank;
      }
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) layout.insert(layout.begin() + a, -1);
    }
    if (layout != std::vector<int>{0, -1, -1, 1}) return false;
    out.mask = v;
    out.filter = *c;
    return true;
  }
  return false;
}

std::optional<AttentionMatch> match(const GraphMatcher& m, const ir::Node& sm) {
  if (!GraphMatcher::is(sm, "Softmax", 1)) return std::nullopt;
  const ir::Attribute* ax = sm.find_attribute("axis");
  const int64_t axis = ax ? ax->i : (sm.opset >= 13 ? -1 : 1);
  if (axis != -1 && axis != 3) return std::nullopt;  // rank 4: before opset 13, axis 3 is also the last axis alone
  const ir::Graph& g = m.graph();
  AttentionMatch out;
  std::vector<ir::NodeId> nodes = {sm.id};

  // Scores side: [Add(., mask_bias)] <- [Div | Mul by a scalar] <- MatMul(Q, K^T).
  std::string s = sm.inputs[0];
  const ir::Node* p = m.producer(s);
  if (!p || m.sole_consumer(s) != &sm) return std::nullopt;
  if (GraphMatcher::is(*p, "Add", 2)) {
    bool found = false;
    for (size_t k = 0; k < 2 && !found; ++k) {
      AttentionMatch trial;
      const std::string& other = p->inputs[1 - k];
      if (!match_mask(m, p->inputs[k], trial) || m.sole_consumer(other) != p) continue;
      out.mask = trial.mask;
      out.filter = trial.filter;
      nodes.push_back(p->id);
      s = other;
      found = true;
    }
    if (!found) return std::nullopt;
    p = m.producer(s);
    if (!p) return std::nullopt;
  }
  float scale = 1.f;
  if (GraphMatcher::is(*p, "Div", 2) || GraphMatcher::is(*p, "Mul", 2)) {
    const bool div = p->op_type == "Div";
    const ir::Node* p0 = m.producer(p->inputs[0]);
    const std::string& raw = div || (p0 && p0->op_type == "MatMul") ? p->inputs[0] : p->inputs[1];
    auto c = m.scalar_operand(*p, p->op_type, raw);
    if (!c || *c == 0.f || m.sole_consumer(raw) != p) return std::nullopt;
    scale = div ? 1.f / *c : *c;
    nodes.push_back(p->id);
    s = raw;
    p = m.producer(s);
    if (!p) return std::nullopt;
  }
  if (!GraphMatcher::is(*p, "MatMul", 2)) return std::nullopt;
  nodes.push_back(p->id);
  auto q = projection(m, p->inputs[0], {0, 2, 1, 3});
  auto k = projection(m, p->inputs[1], {0, 2, 3, 1});
  if (!q || !k || m.sole_consumer(p->inputs[0]) != p || m.sole_consumer(p->inputs[1]) != p) return std::nullopt;

  // Context side: MatMul(probs, V) -> Transpose [0, 2, 1, 3] -> Reshape [0, 0, N * H].
  const ir::Node* pv = m.sole_consumer(sm.outputs[0]);
  if (!pv || !GraphMatcher::is(*pv, "MatMul", 2) || pv->inputs[0] != sm.outputs[0]) return std::nullopt;
  auto v = projection(m, pv->inputs[1], {0, 2, 1, 3});
  if (!v || m.sole_consumer(pv->inputs[1]) != pv) return std::nullopt;
  const ir::Node* ct = m.sole_consumer(pv->outputs[0]);
  if (!ct || !is_transpose(*ct, {0, 2, 1, 3})) return std::nullopt;
  const ir::Node* cr = m.sole_consumer(ct->outputs[0]);
  if (!cr || cr->inputs[0] != ct->outputs[0]) return std::nullopt;
  auto joined = reshape_tail(m, *cr, 1);

  // One x, one head layout, weights of one shape [D_in, N * H].
  const int64_t n = q->n, h = q->h;
  if (q->x != k->x || q->x != v->x || k->n != n || v->n != n || k->h != h || v->h != h) return std::nullopt;
  if (!joined || (*joined)[0] != n * h) return std::nullopt;
  const Dims wd = *m.constant_dims(q->w);
  if (*m.constant_dims(k->w) != wd || *m.constant_dims(v->w) != wd) return std::nullopt;
  const ir::ValueType* xt = g.type_of(q->x);
  if (!xt || !xt->has_shape || xt->dims.size() != 3 || xt->dims[2].value != wd[0]) return std::nullopt;
  if (!out.mask.empty()) {
    const ir::ValueType* mt = g.type_of(out.mask);
    if (!same_dim(mt->dims[0], xt->dims[0]) || !same_dim(mt->dims[1], xt->dims[1])) return std::nullopt;
  }

  for (const Projection* pr : {&*q, &*k, &*v}) nodes.insert(nodes.end(), pr->nodes.begin(), pr->nodes.end());
  nodes.insert(nodes.end(), {pv->id, ct->id, cr->id});
  out.nodes = std::move(nodes);
  out.x = q->x;
  out.wq = q->w;
  out.wk = k->w;
  out.wv = v->w;
  out.bq = q->b;
  out.bk = k->b;
  out.bv = v->b;
  out.y = cr->outputs[0];
  out.name = cr->name.empty() ? sm.name : cr->name;
  out.num_heads = n;
  out.head_size = h;
  out.d_in = wd[0];
  const float default_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(h)));
  if (std::fabs(scale - default_scale) > 1e-6f * default_scale) out.scale = scale;
  return out;
}

// [Wq | Wk | Wv] along columns, and [bq | bk | bv] (float constants, as
// the match checked). Read in place and written straight into the result:
// BERT-base's twelve packed weights are 85 MB, and each extra copy of them
// was a measurable part of session creation.
Tensor concat_columns(const GraphMatcher& m, const std::vector<std::string>& parts, int64_t rows) {
  std::vector<std::pair<const float*, int64_t>> sources;  // data, element count
  int64_t cols = 0;
  for (const std::string& p : parts) {
    const Tensor& t = m.graph().initializers.at(p);
    sources.emplace_back(t.data_as<float>(), t.element_count());
    cols += t.element_count() / rows;
  }
  Tensor packed = Tensor::zeros(DType::kFloat, rows == 1 ? Dims{cols} : Dims{rows, cols}).value();
  float* out = packed.mutable_data_as<float>();
  int64_t offset = 0;
  for (const auto& [data, count] : sources) {
    const int64_t c = count / rows;
    for (int64_t r = 0; r < rows; ++r) std::copy(data + r * c, data + (r + 1) * c, out + r * cols + offset);
    offset += c;
  }
  return packed;
}

// The output of an existing Cast(mask, to=INT32), or "".
std::string existing_int32_cast(const ir::Graph& g, const std::string& mask) {
  for (const auto& n : g.nodes()) {
    if (!GraphMatcher::is(*n, "Cast", 1) || n->inputs[0] != mask) continue;
    const ir::Attribute* to = n->find_attribute("to");
    if (to && to->i == static_cast<int64_t>(DType::kInt32)) return n->outputs[0];
  }
  return "";
}

class AttentionFusion : public Pass {
 public:
  std::string name() const override { return "attention_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    std::vector<AttentionMatch> matches;
    std::vector<std::pair<Tensor, Tensor>> packed;  // W, bias per match
    {
      GraphMatcher m(graph);
      std::set<ir::NodeId> taken;
      for (const auto& n : graph.nodes()) {
        auto a = match(m, *n);
        if (!a) continue;
        bool overlaps = false;
        for (ir::NodeId id : a->nodes) overlaps |= taken.count(id) > 0;
        if (overlaps) continue;
        taken.insert(a->nodes.begin(), a->nodes.end());
        packed.emplace_back(concat_columns(m, {a->wq, a->wk, a->wv}, a->d_in),
                            concat_columns(m, {a->bq, a->bk, a->bv}, 1));
        matches.push_back(std::move(*a));
      }
    }
    for (size_t i = 0; i < matches.size(); ++i) {
      const AttentionMatch& a = matches[i];
      GraphPatch patch(graph, name() + " at '" + a.name + "'");
      std::vector<std::string> inputs = {a.x, patch.add_initializer(a.name + "/qkv_weight", packed[i].first),
                                         patch.add_initializer(a.name + "/qkv_bias", packed[i].second)};
      if (!a.mask.empty()) {
        const ir::ValueType* mt = graph.type_of(a.mask);
        if (mt->dtype == DType::kInt32) {
          inputs.push_back(a.mask);
        } else if (std::string cast = existing_int32_cast(graph, a.mask); !cast.empty()) {
          inputs.push_back(cast);
        } else {
          cast = patch.fresh_name(a.mask + "/int32");
          ir::Node c = fused_node(graph, "Cast", "", {a.mask}, {cast}, patch.fresh_name(a.mask + "/CastInt32"));
          set_int_attr(c, "to", static_cast<int64_t>(DType::kInt32));
          ir::ValueType t = *mt;
          t.dtype = DType::kInt32;
          patch.set_type(cast, t);
          patch.add_node(std::move(c));
          inputs.push_back(cast);
        }
      }
      ir::Node n = fused_node(graph, "Attention", kMicrosoftDomain, inputs, {a.y},
                              patch.fresh_name(a.name + "/Attention"));
      set_int_attr(n, "num_heads", a.num_heads);
      if (!a.mask.empty()) set_float_attr(n, "mask_filter_value", a.filter);
      if (a.scale != 0.f) set_float_attr(n, "scale", a.scale);
      replace_with_fused(patch, graph, ctx, changed, a.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_attention_fusion() { return std::make_unique<AttentionFusion>(); }

}  // namespace loom::transform
