// Hostile graph structure given to the loader and to sessions: nesting,
// cycles, values read or produced wrongly, schema mismatches, shadowing,
// explosive model-local functions and unparseable bytes. Each is refused with a Status
// naming what is at fault, and the process still runs a good model after.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hostile_model_support.h"

namespace loom {
namespace {

using namespace hostile_testing;  // the helpers the hostile-model tests share

// An If nesting `depth` graphs below the main one; `x` flows to the bottom.
std::string nested_if_model(int depth) {
  auto leaf = [](const std::string& out) {
    ::onnx::GraphProto g;
    g.set_name("leaf_" + out);
    auto* n = g.add_node();
    n->set_op_type("Identity");
    n->add_input("x");
    n->add_output(out);
    auto* o = g.add_output();
    o->set_name(out);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    return g;
  };
  ::onnx::GraphProto inner = leaf("o" + std::to_string(depth));
  for (int level = depth - 1; level >= 0; --level) {
    ::onnx::GraphProto g;
    g.set_name("level" + std::to_string(level));
    auto* n = g.add_node();
    n->set_op_type("If");
    n->set_name("if" + std::to_string(level));
    n->add_input("cond");
    n->add_output("o" + std::to_string(level));
    auto* then_branch = n->add_attribute();
    then_branch->set_name("then_branch");
    then_branch->set_type(::onnx::AttributeProto::GRAPH);
    *then_branch->mutable_g() = std::move(inner);
    auto* else_branch = n->add_attribute();
    else_branch->set_name("else_branch");
    else_branch->set_type(::onnx::AttributeProto::GRAPH);
    *else_branch->mutable_g() = leaf("e" + std::to_string(level));
    auto* o = g.add_output();
    o->set_name("o" + std::to_string(level));
    o->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    inner = std::move(g);
  }
  ModelBuilder m;
  m.input("cond", TensorProto::BOOL, {});
  m.input("x", TensorProto::FLOAT, {2});
  // The main graph is level 0's body with the model's inputs.
  ::onnx::GraphProto* main = m.proto().mutable_graph();
  for (const auto& n : inner.node()) *main->add_node() = n;
  m.output("o0", TensorProto::FLOAT, {2});
  return m.bytes();
}

TEST(HostileModelTest, ShallowNestedSubgraphsLoad) {
  auto s = Session::create_from_bytes(testing::reference_env(), nested_if_model(4));
  ASSERT_TRUE(s) << s.status().message();
  Tensor cond = Tensor::from_vector(DType::kBool, {}, std::vector<uint8_t>{1});
  auto out = (*s)->run({{"cond", cond}, {"x", testing::float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{1, 2}));
}

TEST(HostileModelTest, SubgraphsNestedTooDeeplyAreRefused) {
  // Just past the loader's limit: refused by the loader, naming the limit.
  std::string e = load_error(nested_if_model(40));
  EXPECT_HAS(e, "nested deeper than");
  EXPECT_HAS(session_error(nested_if_model(40)), "nested deeper than");
  // Far past it: refused while parsing, still a Status, saying why it may be.
  e = load_error(nested_if_model(2000));
  EXPECT_HAS(e, "nested");
  expect_good_model_runs();
}

TEST(HostileModelTest, CyclicGraphIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Add", {"x", "b"}, {"a"}, "node_a");
  m.node("Relu", {"a"}, {"b"}, "node_b");
  m.output("b", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "cycle");
  EXPECT_HAS(load_error(m.bytes()), "cycle");  // refused as loaded, not by a pass
  EXPECT_TRUE(e.find("'node_a'") != std::string::npos || e.find("'node_b'") != std::string::npos) << e;
  // Without graph passes too (the partitioner orders the graph itself).
  Config c;
  c.providers = {"reference"};
  c.optimization_level = OptimizationLevel::kDisabled;
  auto s = Session::create_from_bytes(testing::make_env(c), m.bytes());
  ASSERT_FALSE(s);
  EXPECT_HAS(s.status().message(), "cycle");
  expect_good_model_runs();
}

TEST(HostileModelTest, ReadingAValueNobodyProducesIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Add", {"x", "ghost"}, {"y"}, "reader");
  m.output("y", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "'ghost'");
  EXPECT_HAS(e, "'reader'");
  EXPECT_HAS(load_error(m.bytes()), "'ghost'");
  expect_good_model_runs();
}

// The fuzzer's first loader finding (fuzz/regressions/model_loader): ONNX's
// data propagation for Shape dereferenced the type of an undefined input.
// Undefined reads are now refused before ONNX's inference runs, also inside
// subgraphs.
TEST(HostileModelTest, UndefinedReadIsRefusedBeforeOnnxInference) {
  ModelBuilder m(15);
  m.node("Shape", {"nowhere"}, {"y"}, "shape");
  m.output("y", TensorProto::INT64, {1});
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "node 'shape' (Shape) reads 'nowhere'");
  expect_good_model_runs();
}

// The fuzzer's second loader finding: a Scan without its body attribute
// crashed ONNX's Scan inference. Nodes are verified against their schema
// (ONNX's checker) before inference: missing, unknown or mistyped
// attributes and wrong arity are refused naming the node.
TEST(HostileModelTest, NodesNotMatchingTheirSchemaAreRefusedBeforeOnnxInference) {
  ModelBuilder m(9);
  m.input("x", TensorProto::FLOAT, {2, 3});
  auto& scan = m.node("Scan", {"x"}, {"y"}, "scan");
  testing::add_int_attr(scan, "num_scan_inputs", 1);  // no body
  m.output("y", TensorProto::FLOAT, {2, 3});
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "node 'scan' (Scan) does not match its op's schema at opset 9");
  EXPECT_HAS(e, "body");
  ModelBuilder extra;
  extra.input("x", TensorProto::FLOAT, {2});
  testing::add_int_attr(extra.node("Relu", {"x"}, {"y"}, "relu"), "bogus", 1);
  extra.output("y", TensorProto::FLOAT, {2});
  EXPECT_HAS(load_error(extra.bytes()), "bogus");
  expect_good_model_runs();
}

// Bytes other than 0 and 1 are not bools: kernels reading them would be
// undefined behaviour (the fuzzer's first session finding), so they are
// refused in initializers and in run inputs, naming the tensor or input.
TEST(HostileModelTest, BoolBytesOtherThanZeroOrOneAreRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::BOOL, {2});
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name("flags");
  t->set_data_type(TensorProto::BOOL);
  t->add_dims(2);
  t->set_raw_data(std::string("\x01\x02", 2));
  m.node("And", {"x", "flags"}, {"y"}, "and");
  m.output("y", TensorProto::BOOL, {2});
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "'flags'");
  EXPECT_HAS(e, "bool element 1 holds byte value 2");

  ModelBuilder ok;
  ok.input("x", TensorProto::BOOL, {2});
  ok.node("Not", {"x"}, {"y"}, "not");
  ok.output("y", TensorProto::BOOL, {2});
  auto s = Session::create_from_bytes(testing::reference_env(), ok.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const uint8_t bad[2] = {0, 7};
  auto refused = (*s)->run({{"x", Tensor::from_bytes(DType::kBool, {2}, bad, 2).value()}});
  ASSERT_FALSE(refused.has_value());
  EXPECT_HAS(refused.status().message(), "input 'x'");
  EXPECT_HAS(refused.status().message(), "byte value 7");
  const uint8_t good[2] = {0, 1};
  auto out = (*s)->run({{"x", Tensor::from_bytes(DType::kBool, {2}, good, 2).value()}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(static_cast<const uint8_t*>((*out)[0].data())[0], 1);
}

TEST(HostileModelTest, ValueProducedTwiceIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"v"}, "first");
  m.node("Neg", {"x"}, {"v"}, "second");
  m.output("v", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "'v'");
  EXPECT_HAS(e, "'first'");
  EXPECT_HAS(e, "'second'");
  EXPECT_HAS(load_error(m.bytes()), "produced by both");
  expect_good_model_runs();
}

TEST(HostileModelTest, NodeOverwritingAGraphInputOrInitializerIsRefused) {
  ModelBuilder input;
  input.input("x", TensorProto::FLOAT, {2});
  input.node("Relu", {"x"}, {"x"}, "clobber");
  input.output("x", TensorProto::FLOAT, {2});
  std::string e = session_error(input.bytes());
  EXPECT_HAS(e, "'x'");
  EXPECT_HAS(e, "'clobber'");

  ModelBuilder init = add_model();
  init.float_initializer("w", {2}, {1, 2});
  init.node("Neg", {"x"}, {"w"}, "clobber");
  e = session_error(init.bytes());
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "'clobber'");
  expect_good_model_runs();
}

// Model-local functions that would expand past the node bound are refused
// before anything is expanded (ONNX's inference would expand them: 61
// functions each calling the previous twice held the inference server for
// its whole timeout).
TEST(HostileModelTest, ExplosiveModelLocalFunctionsAreRefusedBeforeInference) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {2});
  m.node("f60", {"x"}, {"y"}, "call", "local");
  m.output("y", TensorProto::FLOAT, {2});
  for (int i = 0; i < 61; ++i) {
    auto* f = m.proto().add_functions();
    f->set_name("f" + std::to_string(i));
    f->set_domain("local");
    f->add_input("x");
    f->add_output("y");
    auto* op = f->add_opset_import();
    op->set_domain(i == 0 ? "" : "local");
    op->set_version(i == 0 ? 17 : 1);
    for (int k = 0; k < (i == 0 ? 1 : 2); ++k) {
      auto* n = f->add_node();
      n->set_op_type(i == 0 ? "Relu" : "f" + std::to_string(i - 1));
      n->set_domain(i == 0 ? "" : "local");
      n->add_input(k == 0 ? "x" : "t");
      n->add_output(i == 0 || k == 1 ? "y" : "t");
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string e = session_error(m.bytes());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_HAS(e, "expanding the model-local functions makes more than");
  expect_good_model_runs();
}

TEST(HostileModelTest, DeclaredRankAboveTheLimitIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, std::vector<int64_t>(100000, 1));
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", TensorProto::FLOAT, {});
  EXPECT_HAS(session_error(m.bytes()), "the declared type of 'x' has rank 100000, over the limit of 64");
  expect_good_model_runs();
}

TEST(HostileModelTest, InitializerDefinedTwiceIsRefused) {
  ModelBuilder m = add_model();
  m.float_initializer("w", {2}, {1, 2});
  m.float_initializer("w", {2}, {3, 4});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "initializer 'w' is defined twice");
  expect_good_model_runs();
}

// An If branch whose node writes a name the main graph defines: the branch
// would shadow the outer value (ONNX forbids it).
TEST(HostileModelTest, SubgraphShadowingAnOuterValueIsRefused) {
  ModelBuilder m;
  m.input("cond", TensorProto::BOOL, {});
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"r"}, "outer");
  auto branch = [](const std::string& out_name) {
    ::onnx::GraphProto g;
    g.set_name("branch");
    auto* n = g.add_node();
    n->set_op_type("Neg");
    n->add_input("r");
    n->add_output(out_name);
    auto* o = g.add_output();
    o->set_name(out_name);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    return g;
  };
  auto& node = m.node("If", {"cond"}, {"y"}, "if");
  auto* then_a = node.add_attribute();
  then_a->set_name("then_branch");
  then_a->set_type(::onnx::AttributeProto::GRAPH);
  *then_a->mutable_g() = branch("r");  // shadows the outer 'r'
  auto* else_a = node.add_attribute();
  else_a->set_name("else_branch");
  else_a->set_type(::onnx::AttributeProto::GRAPH);
  *else_a->mutable_g() = branch("e");
  m.output("y", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "'r' in a subgraph shadows a value of an enclosing graph");
  expect_good_model_runs();
}

TEST(HostileModelTest, EmptyGraphIsRefused) {
  ModelBuilder m;
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "no outputs");
  expect_good_model_runs();
}

TEST(HostileModelTest, GraphOutputNobodyProducesIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", TensorProto::FLOAT, {2});
  m.output("missing", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "'missing'");
  expect_good_model_runs();
}

TEST(HostileModelTest, TruncatedAndRandomBytesAreRefused) {
  ModelBuilder good = add_model();
  good.float_initializer("w", {2}, {10, 20});
  const std::string bytes = good.bytes();
  for (size_t cut : {size_t{1}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    auto m = onnxio::load_model_bytes(bytes.substr(0, cut), "", "<truncated>");
    EXPECT_FALSE(m.has_value()) << "cut at " << cut;
  }
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::string noise(1 + rng() % 4096, '\0');
    for (char& ch : noise) ch = static_cast<char>(rng());
    auto m = onnxio::load_model_bytes(noise, "", "<noise>");
    if (!m) {
      EXPECT_HAS(m.status().message(), "<noise>");
    }
  }
  const fs::path dir = fresh_dir("truncated");
  write_file(dir / "cut.onnx", bytes.substr(0, bytes.size() / 2));
  EXPECT_HAS(file_error(dir / "cut.onnx"), "cut.onnx");
  EXPECT_HAS(session_error(std::string("not a model at all")), "not a valid ONNX model");
  expect_good_model_runs();
  remove_fresh_dir(dir);
}

}  // namespace
}  // namespace loom
