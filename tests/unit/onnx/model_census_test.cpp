// limits.max_nodes is checked on the model's bytes before they are parsed
// (onnx/model_census.h): a 2M-node model used to be parsed for 33 s and
// 1.7 GB before it was refused, and nothing bounded a graph's 1M outputs.
#include <gtest/gtest.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "onnx/model_census.h"
#include "onnx/model_loader.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::ModelBuilder;

std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}

// A length-delimited field: tag, length, bytes.
std::string field(int number, const std::string& bytes) {
  return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(bytes.size()) + bytes;
}

// A model whose graph repeats `node` `copies` times (and one output "y"),
// written on the wire directly: the test itself never holds the parsed model.
std::string repeated_node_model(const ::onnx::NodeProto& node, int64_t copies) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.output("y", TensorProto::FLOAT, {2});
  ::onnx::ModelProto model = m.proto();
  std::string graph = model.graph().SerializeAsString();
  const std::string one = field(1, node.SerializeAsString());
  graph.reserve(graph.size() + one.size() * static_cast<size_t>(copies));
  for (int64_t i = 0; i < copies; ++i) graph += one;
  model.clear_graph();
  return model.SerializeAsString() + field(7, graph);
}

onnxio::ModelCensus census_of(const std::string& bytes, int64_t max_nodes = 0, int64_t max_values = 0) {
  google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  return onnxio::take_model_census(in, max_nodes, max_values, 160);
}

// x -> If(then: Relu, else: Neg, each in a one-node subgraph) -> y
std::string if_model() {
  ModelBuilder m;
  m.input("c", TensorProto::BOOL, {});
  m.input("x", TensorProto::FLOAT, {2});
  auto& n = m.node("If", {"c"}, {"y"});
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n.add_attribute();
    a->set_name(branch);
    a->set_type(::onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(branch);
    auto* inner = g->add_node();
    inner->set_op_type(std::string(branch) == "then_branch" ? "Relu" : "Neg");
    inner->add_input("x");
    inner->add_output(std::string(branch) + "_y");
    auto* out = g->add_output();
    out->set_name(std::string(branch) + "_y");
  }
  m.output("y", TensorProto::FLOAT, {2});
  return m.bytes();
}

TEST(ModelCensus, CountsNodesAndValueNamesOfSubgraphs) {
  const onnxio::ModelCensus c = census_of(if_model());
  EXPECT_FALSE(c.malformed);
  EXPECT_FALSE(c.stopped);
  EXPECT_EQ(c.nodes, 3);
  // Graph: inputs c, x, output y, If's input c and output y (5); each branch:
  // Relu/Neg's input and output and the branch output (3 each).
  EXPECT_EQ(c.value_names, 11);
}

TEST(ModelCensus, StopsAtTheFirstElementPastABound) {
  const onnxio::ModelCensus nodes = census_of(if_model(), 2);
  EXPECT_TRUE(nodes.stopped);
  EXPECT_EQ(nodes.nodes, 3);
  const onnxio::ModelCensus names = census_of(if_model(), 0, 4);
  EXPECT_TRUE(names.stopped);
  EXPECT_EQ(names.value_names, 5);
}

TEST(ModelCensus, MalformedBytesAreLeftToTheParser) {
  std::string bytes = if_model();
  for (size_t cut : {size_t{1}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_TRUE(census_of(bytes.substr(0, cut)).malformed) << "cut at " << cut;
  EXPECT_TRUE(census_of(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)).malformed);
}

std::string create_error(const std::string& bytes, int64_t max_nodes) {
  Config config;
  config.providers = {"reference"};
  config.max_nodes = max_nodes;
  auto env = testing::make_env(config);
  if (!env) return "no environment";
  auto s = Session::create_from_bytes(env, bytes);
  return s.has_value() ? std::string("(created)") : s.status().message();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ModelCensus, TwoMillionNodesAreRefusedBeforeTheyAreParsed) {
  ::onnx::NodeProto relu;
  relu.set_op_type("Relu");
  relu.add_input("x");
  relu.add_output("y");
  const std::string bytes = repeated_node_model(relu, 2'000'000);
  const auto start = std::chrono::steady_clock::now();
  const std::string error = create_error(bytes, 100'000);
  EXPECT_NE(error.find("more than 100000 nodes"), std::string::npos) << error;
  EXPECT_NE(error.find("limits.max_nodes"), std::string::npos) << error;
  // A hang guard, not a speed test: parsing them all took 33 s.
  EXPECT_LT(seconds_since(start), 10.0);
}

TEST(ModelCensus, AMillionGraphOutputsAreRefusedBeforeTheyAreParsed) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"});
  ::onnx::ModelProto model = m.proto();
  std::string graph = model.graph().SerializeAsString();
  ::onnx::ValueInfoProto out;
  out.set_name("y");
  const std::string one = field(12, out.SerializeAsString());
  for (int i = 0; i < 1'000'000; ++i) graph += one;
  model.clear_graph();
  const std::string error = create_error(model.SerializeAsString() + field(7, graph), 1000);
  EXPECT_NE(error.find("names more than 8000 values"), std::string::npos) << error;
  EXPECT_NE(error.find("8 x limits.max_nodes (1000)"), std::string::npos) << error;
}

TEST(ModelCensus, OneNodeWithAMillionInputsIsRefused) {
  ::onnx::NodeProto concat;
  concat.set_op_type("Concat");
  for (int i = 0; i < 1'000'000; ++i) concat.add_input("x");
  concat.add_output("y");
  const std::string error = create_error(repeated_node_model(concat, 1), 1000);
  EXPECT_NE(error.find("names more than 8000 values"), std::string::npos) << error;
}

TEST(ModelCensus, ModelsWithinTheLimitLoadAsBefore) {
  EXPECT_EQ(create_error(if_model(), 3), "(created)");
  EXPECT_NE(create_error(if_model(), 2).find("more than 2 nodes"), std::string::npos);
}

// A model file is read twice (census, then parse) from the same descriptor.
TEST(ModelCensus, FilesAreRewoundForTheParse) {
  const std::string path = ::testing::TempDir() + "/loom_model_census_" + std::to_string(::getpid()) + ".onnx";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::string bytes = if_model();
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  onnxio::LoadOptions options;
  options.max_nodes = 3;
  auto loaded = onnxio::load_model_file(path, options);
  EXPECT_TRUE(loaded.has_value()) << loaded.status().message();
  options.max_nodes = 2;
  auto refused = onnxio::load_model_file(path, options);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find(path + ": the model has more than 2 nodes"), std::string::npos)
      << refused.status().message();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace loom
