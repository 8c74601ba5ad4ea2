// Common subexpression elimination (basic):
// - identical small initializers (same type, dims and bytes, at most
//   kMaxMergedInitializerBytes; not graph inputs, which a run may override,
//   nor graph outputs) are merged: readers of the later ones read the first;
// - nodes with the same op, domain, opset, attributes and inputs (same values
//   in the same order: commutative operands are not normalised) compute the
//   same outputs, so readers of the later ones read the first's outputs.
//   Nodes are visited in topological order, so the readers of two merged
//   nodes become identical in turn and merge in the same run.
// Never merged: ops whose every evaluation differs (random ops, Dropout,
// which is random in training mode), nodes with subgraphs (their bodies
// are not compared), and nodes outside the ONNX domains, whose kernels may
// keep state or have side effects.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "base/logging.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"

namespace loom::transform {
namespace {

constexpr size_t kMaxMergedInitializerBytes = 4096;

const std::set<std::string> kNonDeterministic = {"RandomUniform",     "RandomNormal", "RandomUniformLike",
                                                 "RandomNormalLike", "Bernoulli",    "Multinomial",
                                                 "Dropout"};

// Appends `s` length-prefixed, so concatenated keys cannot collide.
void put(std::string& key, const std::string& s) {
  key += std::to_string(s.size());
  key += ':';
  key += s;
}

void put_bytes(std::string& key, const void* p, size_t n) { put(key, std::string(static_cast<const char*>(p), n)); }

void put_tensor(std::string& key, const Tensor& t) {
  put(key, std::to_string(static_cast<int>(t.dtype())));
  put_bytes(key, t.dims().data(), t.dims().size() * sizeof(int64_t));
  if (t.is_string()) {
    put(key, std::to_string(t.strings().size()));
    for (const std::string& s : t.strings()) put(key, s);
  } else {
    put_bytes(key, t.data(), t.byte_size());
  }
}

// A key equal for two nodes exactly when they compute the same thing from
// the same values; nullopt for nodes that must not be merged.
// `canon` maps a value name to the name it will have once earlier merges
// are applied.
std::optional<std::string> node_key(const ir::Node& n, const std::unordered_map<std::string, std::string>& canon) {
  if ((!n.domain.empty() && n.domain != "ai.onnx.ml") || kNonDeterministic.count(n.op_type) || n.outputs.empty())
    return std::nullopt;
  std::string key;
  put(key, n.op_type);
  put(key, n.domain);
  put(key, std::to_string(n.opset));
  put(key, std::to_string(n.inputs.size()));
  for (const std::string& in : n.inputs) {
    auto c = canon.find(in);
    put(key, c == canon.end() ? in : c->second);
  }
  // Which outputs exist (an omitted optional output may not be computed).
  for (const std::string& o : n.outputs) key += o.empty() ? '0' : '1';
  std::vector<const ir::Attribute*> attrs;
  for (const ir::Attribute& a : n.attributes) attrs.push_back(&a);
  std::sort(attrs.begin(), attrs.end(), [](auto* a, auto* b) { return a->name < b->name; });
  for (const ir::Attribute* a : attrs) {
    if (a->graph || !a->graphs.empty() || a->type == ir::AttrType::kSparseTensor ||
        a->type == ir::AttrType::kTypeProto || a->type == ir::AttrType::kUndefined)
      return std::nullopt;
    put(key, a->name);
    put(key, std::to_string(static_cast<int>(a->type)));
    switch (a->type) {
      case ir::AttrType::kFloat: put_bytes(key, &a->f, sizeof a->f); break;  // bitwise: -0 != 0, NaN == NaN
      case ir::AttrType::kInt: put(key, std::to_string(a->i)); break;
      case ir::AttrType::kString: put(key, a->s); break;
      case ir::AttrType::kFloats: put_bytes(key, a->floats.data(), a->floats.size() * sizeof(float)); break;
      case ir::AttrType::kInts: put_bytes(key, a->ints.data(), a->ints.size() * sizeof(int64_t)); break;
      case ir::AttrType::kStrings:
        put(key, std::to_string(a->strings.size()));
        for (const std::string& s : a->strings) put(key, s);
        break;
      case ir::AttrType::kTensor:
        if (!a->tensor) return std::nullopt;
        put_tensor(key, *a->tensor);
        break;
      case ir::AttrType::kTensors:
        put(key, std::to_string(a->tensors.size()));
        for (const Tensor& t : a->tensors) put_tensor(key, t);
        break;
      default: return std::nullopt;
    }
  }
  return key;
}

class CommonSubexpressionElimination : public Pass {
 public:
  std::string name() const override { return "common_subexpression_elimination"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  // All merges of a run go into one patch (one validation of the graph):
  // nodes are keyed with the names their inputs will have after the merges
  // found so far, so readers of merged nodes merge in the same run.
  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    std::unordered_map<std::string, std::string> canon;  // merged value -> kept value
    GraphPatch patch(graph, name());
    // Hashed once: a graph may have as many outputs (and inputs) as nodes.
    const std::unordered_set<std::string_view> outputs(graph.outputs.begin(), graph.outputs.end());
    merge_initializers(graph, outputs, patch, canon);
    LOOM_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.topological_order());
    std::unordered_map<std::string, const ir::Node*> first;
    for (ir::Node* n : order) {
      auto key = node_key(*n, canon);
      if (!key) continue;
      // An Identity naming a graph output would only be replaced by another
      // (graph outputs keep their names), round after round.
      if (n->op_type == "Identity" && outputs.count(n->outputs[0])) {
        first.emplace(*key, n);
        continue;
      }
      auto [it, inserted] = first.emplace(*key, n);
      if (inserted) continue;
      const ir::Node& keep = *it->second;
      for (size_t i = 0; i < n->outputs.size(); ++i)
        if (!n->outputs[i].empty()) {
          patch.replace_uses(n->outputs[i], keep.outputs[i]);
          canon[n->outputs[i]] = keep.outputs[i];
        }
      patch.remove_node(n->id);
    }
    if (patch.empty()) return Status::ok();
    Status st = patch.commit();
    if (!st) {
      log::logger()->debug("{}: {}", ctx.model_name, st.message());
      return Status::ok();
    }
    *changed = true;
    return Status::ok();
  }

 private:
  static void merge_initializers(const ir::Graph& graph, const std::unordered_set<std::string_view>& outputs,
                                 GraphPatch& patch, std::unordered_map<std::string, std::string>& canon) {
    const std::unordered_set<std::string_view> inputs(graph.inputs.begin(), graph.inputs.end());
    std::set<std::string> read;  // only initializers something reads need merging
    for (const auto& n : graph.nodes())
      for (const std::string& v : n->inputs) read.insert(v);
    std::unordered_map<std::string, std::string> first;  // key -> initializer name
    std::vector<std::pair<std::string, std::string>> merges;  // (duplicate, kept)
    for (const auto& [name, t] : graph.initializers) {
      if (t.byte_size() > kMaxMergedInitializerBytes || (t.is_string() && t.element_count() > 64)) continue;
      if (inputs.count(name) || outputs.count(name)) continue;
      std::string key;
      put_tensor(key, t);
      auto [it, inserted] = first.emplace(key, name);
      if (!inserted && read.count(name)) merges.emplace_back(name, it->second);
    }
    for (const auto& [dup, keep] : merges) {
      patch.replace_uses(dup, keep);  // the duplicate is then unread: dead-code elimination drops it
      canon[dup] = keep;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_common_subexpression_elimination() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace loom::transform
