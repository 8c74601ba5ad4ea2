// The in-process inference of If, Loop and Scan (shape_rules_control_flow
// .cpp): bodies are inferred in the scope of the enclosing graph, body
// inputs the model left untyped get what the op feeds them, and outputs
// take their bodies' shapes merged with what else they may be.
#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "onnx/model_loader.h"

namespace loom::opreg {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

// A subgraph under construction: the graph attribute `name` of `node`.
class Body {
 public:
  Body(::onnx::NodeProto& node, const std::string& name) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    g_ = a->mutable_g();
    g_->set_name(name);
  }
  // An input with no type (dims empty, elem_type 0) or a typed one.
  Body& input(const std::string& name, int32_t elem_type = 0, std::vector<int64_t> dims = {}) {
    auto* vi = g_->add_input();
    vi->set_name(name);
    if (elem_type != 0) {
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(elem_type);
      auto* shape = tt->mutable_shape();
      for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    }
    return *this;
  }
  Body& output(const std::string& name) {
    g_->add_output()->set_name(name);
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    auto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(g_->name() + "_" + op + std::to_string(g_->node_size()));
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }

 private:
  ::onnx::GraphProto* g_;
};

// Loaded with the in-process inference alone.
onnxio::LoadedModel load(const testing::ModelBuilder& m) {
  onnxio::LoadOptions o;
  o.onnx_inference = false;
  auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test", o);
  EXPECT_TRUE(loaded.has_value()) << loaded.status().message();
  return loaded.has_value() ? std::move(*loaded) : onnxio::LoadedModel{};
}

std::string type_of(const ir::Graph& g, const std::string& v) {
  const ir::ValueType* t = g.type_of(v);
  return t == nullptr ? "none" : t->to_string();
}

const ir::Graph& body_of(const ir::Graph& g, const std::string& attr) {
  for (const auto& n : g.nodes())
    if (const ir::Attribute* a = n->find_attribute(attr); a != nullptr && a->graph) return *a->graph;
  static const ir::Graph kNone;
  ADD_FAILURE() << "no node has a graph attribute '" << attr << "'";
  return kNone;
}

TEST(ControlFlowShapesTest, IfOutputsKeepWhatBothBranchesAgreeOn) {
  testing::ModelBuilder m(13);
  m.input("cond", ::onnx::TensorProto::BOOL, {});
  m.input("x", kFloat, {-1, 3});  // dims "d0", 3
  auto& node = m.node("If", {"cond"}, {"same", "rows_differ"});
  Body then_b(node, "then_branch");
  then_b.node("Relu", {"x"}, {"t0"});
  testing::add_int_attr(then_b.node("Concat", {"x", "x"}, {"t1"}), "axis", 0);
  then_b.output("t0").output("t1");
  Body else_b(node, "else_branch");
  else_b.node("Neg", {"x"}, {"e0"});
  else_b.node("Sigmoid", {"x"}, {"e1"});
  else_b.output("e0").output("e1");
  m.proto().mutable_graph()->add_output()->set_name("same");
  m.proto().mutable_graph()->add_output()->set_name("rows_differ");
  auto loaded = load(m);
  ASSERT_TRUE(loaded.graph);
  EXPECT_EQ(type_of(*loaded.graph, "same"), "float[d0,3]");
  EXPECT_EQ(type_of(*loaded.graph, "rows_differ"), "float[?,3]");
  EXPECT_EQ(type_of(body_of(*loaded.graph, "then_branch"), "t1"), "float[?,3]");
}

TEST(ControlFlowShapesTest, LoopTypesUntypedBodyInputsAndItsOutputs) {
  testing::ModelBuilder m(13);
  m.input("trips", ::onnx::TensorProto::INT64, {});
  m.input("go", ::onnx::TensorProto::BOOL, {});
  m.input("v0", kFloat, {2, 3});
  auto& node = m.node("Loop", {"trips", "go", "v0"}, {"v_final", "rows"});
  Body b(node, "body");
  b.input("i").input("c").input("v");  // untyped, as exporters may leave them
  b.node("Identity", {"c"}, {"c_out"});
  b.node("Add", {"v", "v"}, {"v_out"});
  b.node("Relu", {"v"}, {"row"});
  b.output("c_out").output("v_out").output("row");
  m.proto().mutable_graph()->add_output()->set_name("v_final");
  m.proto().mutable_graph()->add_output()->set_name("rows");
  auto loaded = load(m);
  ASSERT_TRUE(loaded.graph);
  const ir::Graph& body = body_of(*loaded.graph, "body");
  EXPECT_EQ(type_of(body, "i"), "int64[]");
  EXPECT_EQ(type_of(body, "c_out"), "bool[]");
  // A state's dims may change from one iteration to the next: rank only.
  EXPECT_EQ(type_of(body, "v"), "float[?,?]");
  EXPECT_EQ(type_of(*loaded.graph, "v_final"), "float[?,?]");
  EXPECT_EQ(type_of(*loaded.graph, "rows"), "float[?,?,?]");
}

TEST(ControlFlowShapesTest, LoopWithDeclaredBodyKeepsItsStateShape) {
  testing::ModelBuilder m(13);
  m.input("trips", ::onnx::TensorProto::INT64, {});
  m.input("v0", kFloat, {2, 3});
  auto& node = m.node("Loop", {"trips", "", "v0"}, {"v_final"});
  Body b(node, "body");
  b.input("i", ::onnx::TensorProto::INT64, {}).input("c", ::onnx::TensorProto::BOOL, {}).input("v", kFloat, {2, 3});
  b.node("Identity", {"c"}, {"c_out"});
  b.node("Mul", {"v", "v"}, {"v_out"});
  b.output("c_out").output("v_out");
  m.proto().mutable_graph()->add_output()->set_name("v_final");
  auto loaded = load(m);
  ASSERT_TRUE(loaded.graph);
  EXPECT_EQ(type_of(*loaded.graph, "v_final"), "float[2,3]");
}

// Scan(s0 [3], xs [5, 3]) with body (s, x) -> (s + x, x * x), the axes
// attributes given where not empty.
testing::ModelBuilder scan_model(const std::vector<int64_t>& input_axes, const std::vector<int64_t>& output_axes) {
  testing::ModelBuilder m(11);
  m.input("s0", kFloat, {3});
  m.input("xs", kFloat, {5, 3});
  auto& node = m.node("Scan", {"s0", "xs"}, {"s_final", "ys"});
  testing::add_int_attr(node, "num_scan_inputs", 1);
  if (!input_axes.empty()) testing::add_ints_attr(node, "scan_input_axes", input_axes);
  if (!output_axes.empty()) testing::add_ints_attr(node, "scan_output_axes", output_axes);
  Body b(node, "body");
  b.input("s").input("x");
  b.node("Add", {"s", "x"}, {"s_out"});
  b.node("Mul", {"x", "x"}, {"y"});
  b.output("s_out").output("y");
  m.proto().mutable_graph()->add_output()->set_name("s_final");
  m.proto().mutable_graph()->add_output()->set_name("ys");
  return m;
}

TEST(ControlFlowShapesTest, ScanOutputsGainTheIterationDim) {
  auto loaded = load(scan_model({}, {1}));
  ASSERT_TRUE(loaded.graph);
  const ir::Graph& body = body_of(*loaded.graph, "body");
  EXPECT_EQ(type_of(body, "x"), "float[3]");  // one slice of xs
  EXPECT_EQ(type_of(*loaded.graph, "s_final"), "float[3]");
  EXPECT_EQ(type_of(*loaded.graph, "ys"), "float[3,5]");
}

TEST(ControlFlowShapesTest, HostileControlFlowAttributesSayNothing) {
  auto loaded = load(scan_model({INT64_MIN}, {INT64_MAX}));  // refused at run time, not at load
  ASSERT_TRUE(loaded.graph);
  EXPECT_EQ(type_of(*loaded.graph, "ys"), "none");
}

}  // namespace
}  // namespace loom::opreg
