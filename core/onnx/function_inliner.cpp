#include "onnx/function_inliner.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace loom::onnxio {
namespace {

std::string domain_key(const std::string& d) { return d == "ai.onnx" ? "" : d; }

using FunctionKey = std::pair<std::string, std::string>;  // (domain, name)

std::string call_label(const ::onnx::NodeProto& n) {
  return "node '" + n.name() + "' (" + (n.domain().empty() ? "" : n.domain() + ".") + n.op_type() + ")";
}

class Inliner {
 public:
  Inliner(const ::onnx::ModelProto& model, int64_t max_nodes)
      : max_nodes_(max_nodes > 0 ? max_nodes : kDefaultMaxExpandedNodes) {
    for (const auto& f : model.functions()) functions_[{domain_key(f.domain()), f.name()}] = &f;
  }

  // Refuses recursion and an expansion past the bound before anything is
  // built: the node count of every function, expanded, memoised.
  Status check_size(const ::onnx::GraphProto& g) {
    int64_t total = 0;
    for (const auto& n : g.node()) {
      int64_t count = 0;
      LOOM_RETURN_IF_ERROR(node_nodes(n, &count).with_context(call_label(n)));
      total = capped_add(total, count);
    }
    if (total > max_nodes_)
      return invalid_argument("expanding the model-local functions makes more than " + std::to_string(max_nodes_) +
                              " nodes (limits.max_nodes)");
    return Status::ok();
  }

  // Rewrites `g`'s nodes (and its subgraphs') with every call expanded.
  Status expand_graph(::onnx::GraphProto& g, int depth) {
    ::google::protobuf::RepeatedPtrField<::onnx::NodeProto> out;
    for (::onnx::NodeProto& n : *g.mutable_node()) LOOM_RETURN_IF_ERROR(expand_node(std::move(n), out, depth));
    g.mutable_node()->Swap(&out);
    return Status::ok();
  }

 private:
  // Appends `n` to `out`, or the body of the function it calls, expanded.
  Status expand_node(::onnx::NodeProto n, ::google::protobuf::RepeatedPtrField<::onnx::NodeProto>& out, int depth) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) LOOM_RETURN_IF_ERROR(expand_graph(*a.mutable_g(), depth));
      for (auto& sub : *a.mutable_graphs()) LOOM_RETURN_IF_ERROR(expand_graph(sub, depth));
    }
    auto it = functions_.find({domain_key(n.domain()), n.op_type()});
    if (it == functions_.end()) {
      LOOM_RETURN_IF_ERROR(count_node(n));
      *out.Add() = std::move(n);
      return Status::ok();
    }
    const ::onnx::FunctionProto& f = *it->second;
    if (depth >= kMaxFunctionDepth)
      return invalid_argument(call_label(n) + ": model-local functions call each other more than " +
                              std::to_string(kMaxFunctionDepth) + " deep (a function that calls itself?)");
    if (n.input_size() > f.input_size() || n.output_size() > f.output_size())
      return invalid_argument(call_label(n) + " has " + std::to_string(n.input_size()) + " inputs and " +
                              std::to_string(n.output_size()) + " outputs; function '" + f.name() + "' declares " +
                              std::to_string(f.input_size()) + " and " + std::to_string(f.output_size()));
    const std::string prefix = (n.name().empty() ? f.name() + "_call" + std::to_string(calls_) : n.name()) + "/";
    ++calls_;
    std::map<std::string, std::string> rename;  // body value -> graph value
    for (int i = 0; i < f.input_size(); ++i) rename[f.input(i)] = i < n.input_size() ? n.input(i) : "";
    // An output the call leaves out is still made (under a name of this
    // call's own; dead-code elimination drops it): body ops may require it.
    for (int i = 0; i < f.output_size(); ++i)
      rename[f.output(i)] = i < n.output_size() && !n.output(i).empty() ? n.output(i) : prefix + f.output(i);
    std::map<std::string, const ::onnx::AttributeProto*> call_attrs;
    for (const auto& a : n.attribute()) call_attrs[a.name()] = &a;
    for (const ::onnx::NodeProto& body : f.node()) {
      ::onnx::NodeProto copy = body;
      if (!copy.name().empty()) copy.set_name(prefix + copy.name());
      for (std::string& v : *copy.mutable_input()) v = renamed(v, rename, prefix, /*define=*/false);
      for (std::string& v : *copy.mutable_output()) v = renamed(v, rename, prefix, /*define=*/true);
      bind_attributes(copy, call_attrs);
      for (auto& a : *copy.mutable_attribute()) {
        if (a.has_g()) rename_in_subgraph(*a.mutable_g(), rename, prefix, call_attrs);
        for (auto& sub : *a.mutable_graphs()) rename_in_subgraph(sub, rename, prefix, call_attrs);
      }
      LOOM_RETURN_IF_ERROR(expand_node(std::move(copy), out, depth + 1).with_context("in function '" + f.name() + "'"));
    }
    return Status::ok();
  }

  Status count_node(const ::onnx::NodeProto& n) {
    if (++nodes_ > max_nodes_)  // check_size ran first: a guard, not the bound's real check
      return invalid_argument(call_label(n) + ": expanding the model-local functions makes more than " +
                              std::to_string(max_nodes_) + " nodes (limits.max_nodes)");
    return Status::ok();
  }

  // Saturates at max_nodes_ + 1.
  int64_t capped_add(int64_t a, int64_t b) const { return a > max_nodes_ - b ? max_nodes_ + 1 : a + b; }

  Status graph_nodes(const ::onnx::GraphProto& g, int64_t* total) {
    for (const auto& n : g.node()) {
      int64_t count = 0;
      LOOM_RETURN_IF_ERROR(node_nodes(n, &count));
      *total = capped_add(*total, count);
    }
    return Status::ok();
  }

  Status node_nodes(const ::onnx::NodeProto& n, int64_t* count) {
    int64_t c = 0;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) LOOM_RETURN_IF_ERROR(graph_nodes(a.g(), &c));
      for (const auto& sub : a.graphs()) LOOM_RETURN_IF_ERROR(graph_nodes(sub, &c));
    }
    const FunctionKey key{domain_key(n.domain()), n.op_type()};
    auto f = functions_.find(key);
    if (f == functions_.end()) {
      *count = capped_add(c, 1);
      return Status::ok();
    }
    auto memo = sizes_.find(key);
    if (memo == sizes_.end()) {
      if (!visiting_.insert(key).second)
        return invalid_argument("model-local function '" + f->second->name() +
                                "' calls itself (directly or through others)");
      int64_t body = 0;
      for (const auto& b : f->second->node()) {
        int64_t bc = 0;
        LOOM_RETURN_IF_ERROR(node_nodes(b, &bc));
        body = capped_add(body, bc);
      }
      visiting_.erase(key);
      memo = sizes_.emplace(key, body).first;
    }
    *count = capped_add(c, memo->second);
    return Status::ok();
  }

  // The graph name of body value `v`: a formal's actual, else the call's
  // own copy (an empty name stays empty: an omitted optional).
  static std::string renamed(const std::string& v, std::map<std::string, std::string>& rename,
                             const std::string& prefix, bool define) {
    if (v.empty()) return v;
    auto it = rename.find(v);
    if (it != rename.end()) return it->second;
    if (!define) return v;  // read before any body node made it: an outer value the body reads
    return rename[v] = prefix + v;
  }

  // Attributes given by reference (ref_attr_name) take the call's value
  // under the body's name; without one at the call they are dropped, so the
  // op's default applies.
  static void bind_attributes(::onnx::NodeProto& n, const std::map<std::string, const ::onnx::AttributeProto*>& call) {
    auto* attrs = n.mutable_attribute();
    for (int i = attrs->size() - 1; i >= 0; --i) {
      ::onnx::AttributeProto& a = (*attrs)[i];
      if (a.ref_attr_name().empty()) continue;
      auto it = call.find(a.ref_attr_name());
      if (it == call.end()) {
        attrs->DeleteSubrange(i, 1);
        continue;
      }
      const std::string name = a.name();
      a = *it->second;
      a.set_name(name);
    }
  }

  // A body node's subgraph: the body values it reads from outside take the
  // call's names; what it defines itself keeps its own.
  static void rename_in_subgraph(::onnx::GraphProto& g, const std::map<std::string, std::string>& rename,
                                 const std::string& prefix,
                                 const std::map<std::string, const ::onnx::AttributeProto*>& call,
                                 std::set<std::string> local = {}) {
    for (const auto& in : g.input()) local.insert(in.name());
    for (const auto& init : g.initializer()) local.insert(init.name());
    for (const auto& n : g.node())
      for (const auto& o : n.output()) local.insert(o);
    auto outer = [&](std::string& v) {
      if (v.empty() || local.count(v)) return;
      auto it = rename.find(v);
      if (it != rename.end()) v = it->second;
    };
    for (auto& n : *g.mutable_node()) {
      for (std::string& v : *n.mutable_input()) outer(v);
      bind_attributes(n, call);
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) rename_in_subgraph(*a.mutable_g(), rename, prefix, call, local);
        for (auto& sub : *a.mutable_graphs()) rename_in_subgraph(sub, rename, prefix, call, local);
      }
    }
    for (auto& o : *g.mutable_output()) outer(*o.mutable_name());
  }

  std::map<FunctionKey, const ::onnx::FunctionProto*> functions_;
  std::map<FunctionKey, int64_t> sizes_;  // nodes of each function, expanded
  std::set<FunctionKey> visiting_;
  int64_t max_nodes_;
  int64_t nodes_ = 0;
  int64_t calls_ = 0;
};

// The function's opset imports must agree with the model's (one version of
// each domain per graph); domains only a function imports join the model.
Status merge_opsets(::onnx::ModelProto& model) {
  std::map<std::string, int64_t> model_opsets;
  for (const auto& op : model.opset_import()) model_opsets[domain_key(op.domain())] = op.version();
  for (const auto& f : model.functions())
    for (const auto& op : f.opset_import()) {
      const std::string d = domain_key(op.domain());
      auto it = model_opsets.find(d);
      if (it == model_opsets.end()) {
        model_opsets[d] = op.version();
        auto* added = model.add_opset_import();
        added->set_domain(op.domain());
        added->set_version(op.version());
      } else if (it->second != op.version()) {
        return not_implemented("function '" + f.name() + "' imports " + (d.empty() ? "ai.onnx" : d) + " opset " +
                               std::to_string(op.version()) + " and the model opset " + std::to_string(it->second) +
                               ": Loom runs one version of an opset per model");
      }
    }
  return Status::ok();
}

}  // namespace

Status inline_local_functions(::onnx::ModelProto& model, int64_t max_nodes) {
  if (model.functions_size() == 0) return Status::ok();
  LOOM_RETURN_IF_ERROR(merge_opsets(model));
  Inliner inliner(model, max_nodes);
  LOOM_RETURN_IF_ERROR(inliner.check_size(model.graph()));
  LOOM_RETURN_IF_ERROR(inliner.expand_graph(*model.mutable_graph(), 0));
  model.clear_functions();
  return Status::ok();
}

}  // namespace loom::onnxio
