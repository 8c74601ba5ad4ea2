// Gradient lowering: replaces each ai.onnx.preview.training Gradient node by
// ordinary ONNX nodes that compute d(y)/d(x) for each x in `xs`, by reverse-
// mode differentiation of the nodes between xs and y, seeded with ones.
// This is semantics, not optimisation, so it runs at every level.
//
// Differentiable ops: Add, Sub, Mul, Div, Neg, Identity. Broadcasting
// between operands is refused unless static shapes show there is none (the
// reduction back to an operand's shape is not implemented). Anything else is
// refused with the node named.
#include <map>
#include <set>

#include "transform/passes/passes.h"

namespace loom::transform {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

class GradientBuilder {
 public:
  GradientBuilder(ir::Graph& g, const ir::Node& grad) : g_(g), grad_(grad), prefix_(grad.name + "/") {
    if (prefix_ == "/") prefix_ = "gradient" + std::to_string(grad.id) + "/";
  }

  Status build() {
    const ir::Attribute* xs_attr = grad_.find_attribute("xs");
    const ir::Attribute* y_attr = grad_.find_attribute("y");
    if (!xs_attr || !y_attr) return invalid_graph("Gradient node " + grad_.label() + " needs attributes xs and y");
    if (grad_.outputs.size() != xs_attr->strings.size())
      return invalid_graph("Gradient node " + grad_.label() + " must have one output per entry of xs");
    auto opset = g_.opsets.find("");
    if (opset == g_.opsets.end() || opset->second < 9)
      return not_implemented("Gradient node " + grad_.label() + " needs the ONNX domain at opset 9 or later");
    opset_ = opset->second;
    const std::string& y = y_attr->s;
    const ir::ValueType* yt = g_.type_of(y);
    if (!yt || yt->dtype == DType::kUndefined)
      return invalid_graph("Gradient node " + grad_.label() + ": the type of y '" + y + "' is unknown");
    dtype_ = yt->dtype;
    if (dtype_ != DType::kFloat && dtype_ != DType::kDouble)
      return not_implemented("Gradient node " + grad_.label() + ": y '" + y + "' is " + dtype_name(dtype_) +
                             "; only float and double are differentiated");

    LOOM_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g_.topological_order());
    std::map<std::string, ir::Node*> producer;
    for (ir::Node* n : order)
      for (const std::string& o : n->outputs) producer[o] = n;
    // Nodes on a path to y, walked backwards.
    std::set<std::string> needed{y};
    std::vector<ir::Node*> backward;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      ir::Node* n = *it;
      if (n->id == grad_.id) continue;
      bool on_path = false;
      for (const std::string& o : n->outputs) on_path = on_path || needed.count(o);
      if (!on_path) continue;
      backward.push_back(n);
      for (const std::string& in : n->inputs) needed.insert(in);
    }
    grads_[y] = ones_like(y);
    for (ir::Node* n : backward) LOOM_RETURN_IF_ERROR(differentiate(*n));
    for (size_t i = 0; i < xs_attr->strings.size(); ++i) {
      const std::string& x = xs_attr->strings[i];
      auto it = grads_.find(x);
      const std::string g = it != grads_.end() ? it->second : zeros_like(x);
      emit("Identity", {g}, {grad_.outputs[i]});
    }
    return Status::ok();
  }

  std::vector<ir::Node>& nodes() { return nodes_; }

 private:
  Status differentiate(const ir::Node& n) {
    if (!n.domain.empty() || n.outputs.size() != 1)
      return not_implemented("Gradient: cannot differentiate node " + n.label());
    auto g_it = grads_.find(n.outputs[0]);
    if (g_it == grads_.end()) return Status::ok();  // does not reach y
    const std::string g = g_it->second;
    const std::string& op = n.op_type;
    if (op == "Identity") return accumulate(n.inputs[0], g);
    if (op == "Neg") return accumulate(n.inputs[0], value("Neg", {g}));
    if (op != "Add" && op != "Sub" && op != "Mul" && op != "Div")
      return not_implemented("Gradient: differentiating " + op + " (node " + n.label() + ") is not supported");
    const std::string &a = n.inputs[0], &b = n.inputs[1];
    if (!same_static_shape(a, b))
      return not_implemented("Gradient: node " + n.label() + " may broadcast its operands, which is not supported");
    if (op == "Add") {
      LOOM_RETURN_IF_ERROR(accumulate(a, g));
      return accumulate(b, g);
    }
    if (op == "Sub") {
      LOOM_RETURN_IF_ERROR(accumulate(a, g));
      return accumulate(b, value("Neg", {g}));
    }
    if (op == "Mul") {
      LOOM_RETURN_IF_ERROR(accumulate(a, value("Mul", {g, b})));
      return accumulate(b, value("Mul", {g, a}));
    }
    // Div: d/da = g / b; d/db = -g * a / b^2
    LOOM_RETURN_IF_ERROR(accumulate(a, value("Div", {g, b})));
    return accumulate(b, value("Neg", {value("Div", {value("Mul", {g, a}), value("Mul", {b, b})})}));
  }

  bool same_static_shape(const std::string& a, const std::string& b) const {
    const ir::ValueType* ta = g_.type_of(a);
    const ir::ValueType* tb = g_.type_of(b);
    return ta && tb && ta->fully_known() && tb->fully_known() && ta->known_dims() == tb->known_dims();
  }

  Status accumulate(const std::string& x, const std::string& g) {
    auto it = grads_.find(x);
    grads_[x] = it == grads_.end() ? g : value("Add", {it->second, g});
    return Status::ok();
  }

  std::string filled_like(const std::string& like, float fill) {
    Tensor one = *Tensor::zeros(dtype_, {1});
    if (dtype_ == DType::kFloat) one.mutable_data_as<float>()[0] = fill;
    else if (dtype_ == DType::kDouble) one.mutable_data_as<double>()[0] = fill;
    ir::Attribute a;
    a.name = "value";
    a.type = ir::AttrType::kTensor;
    a.tensor = std::make_shared<Tensor>(one);
    const std::string shape = value("Shape", {like});
    const std::string out = fresh();
    emit("ConstantOfShape", {shape}, {out}, {a});
    return out;
  }
  std::string ones_like(const std::string& v) { return filled_like(v, 1.0f); }
  std::string zeros_like(const std::string& v) { return filled_like(v, 0.0f); }

  std::string value(const std::string& op, std::vector<std::string> inputs) {
    const std::string out = fresh();
    emit(op, std::move(inputs), {out});
    return out;
  }
  std::string fresh() { return prefix_ + "v" + std::to_string(counter_++); }
  void emit(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
            std::vector<ir::Attribute> attrs = {}) {
    ir::Node n;
    n.name = prefix_ + op + std::to_string(counter_++);
    n.op_type = op;
    n.opset = opset_;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attributes = std::move(attrs);
    // Rewrites keep value types: kernels and the planner rely on them.
    for (const std::string& o : n.outputs) {
      ir::ValueType t;
      t.dtype = op == "Shape" ? DType::kInt64 : dtype_;
      if (!g_.value_types.count(o)) g_.value_types[o] = t;
    }
    nodes_.push_back(std::move(n));
  }

  ir::Graph& g_;
  const ir::Node& grad_;
  std::string prefix_;
  int64_t opset_ = 0;
  DType dtype_ = DType::kUndefined;
  int counter_ = 0;
  std::map<std::string, std::string> grads_;  // value -> name of d(y)/d(value)
  std::vector<ir::Node> nodes_;
};

class GradientLowering : public Pass {
 public:
  std::string name() const override { return "gradient_lowering"; }
  OptimizationLevel level() const override { return OptimizationLevel::kDisabled; }

  Status run(ir::Graph& graph, PassContext&, bool* changed) override {
    std::vector<const ir::Node*> grads;
    for (const auto& n : graph.nodes())
      if (n->domain == kTrainingDomain && n->op_type == "Gradient") grads.push_back(n.get());
    for (const ir::Node* gn : grads) {
      GradientBuilder b(graph, *gn);
      LOOM_RETURN_IF_ERROR(b.build());
      const ir::NodeId id = gn->id;
      for (ir::Node& n : b.nodes()) graph.add_node(std::move(n));
      graph.remove_nodes({id});
      *changed = true;
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_gradient_lowering() { return std::make_unique<GradientLowering>(); }

}  // namespace loom::transform
