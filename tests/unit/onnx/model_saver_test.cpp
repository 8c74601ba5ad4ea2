// save_model writes what load_model_file reads back as the same graph: every
// attribute kind, subgraphs with their own initializers, sequence types,
// symbolic dims, external data for large initializers; bad paths fail
// naming the path.
#include "onnx/model_saver.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "loom/session.h"
#include "onnx/model_loader.h"

namespace loom::onnxio {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / "loom_model_saver_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

ir::ValueType tensor_type(DType dtype, std::vector<DimInfo> dims, ValueKind kind = ValueKind::kTensor) {
  ir::ValueType vt;
  vt.kind = kind;
  vt.dtype = dtype;
  vt.has_shape = true;
  vt.dims = std::move(dims);
  return vt;
}

ir::Node make_node(const std::string& name, const std::string& op, std::vector<std::string> in,
                   std::vector<std::string> out, const std::string& domain = "") {
  ir::Node n;
  n.name = name;
  n.op_type = op;
  n.domain = domain;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// A branch of If: out = op(a), with an initializer of its own.
std::shared_ptr<ir::Graph> branch(const ir::Graph* parent, const std::string& op, const std::string& out) {
  auto g = std::make_shared<ir::Graph>();
  g->name = out + "_graph";
  g->parent = parent;
  g->opsets = parent->opsets;
  g->initializers.emplace(out + "_k", Tensor::from_vector(DType::kFloat, {4}, std::vector<float>{1, 2, 3, 4}));
  g->value_types[out + "_k"] = tensor_type(DType::kFloat, {{4, ""}});
  g->add_node(make_node(out + "_op", op, {"a"}, {out + "_mid"}));
  g->add_node(make_node(out + "_mul", "Mul", {out + "_mid", out + "_k"}, {out}));
  g->outputs = {out};
  g->value_types[out] = tensor_type(DType::kFloat, {{-1, "batch"}, {4, ""}});
  return g;
}

// x [batch, 4] + bias (an initializer that is also an input) -> a;
// If(cond) -> b; SequenceConstruct(a, a) -> seq; a custom-domain node with
// every attribute kind -> z; MatMul(a, big) with `big` large enough for
// external data -> m.
std::shared_ptr<ir::Graph> sample_graph() {
  auto g = std::make_shared<ir::Graph>();
  g->name = "sample";
  g->opsets = {{"", 17}, {"test.custom", 1}};
  g->inputs = {"x", "cond", "bias"};
  g->outputs = {"b", "seq", "z", "m"};
  g->value_types["x"] = tensor_type(DType::kFloat, {{-1, "batch"}, {4, ""}});
  g->value_types["cond"] = tensor_type(DType::kBool, {});
  g->initializers.emplace("bias", Tensor::from_vector(DType::kFloat, {4}, std::vector<float>{0.5f, -1, 2, 0}));
  g->value_types["bias"] = tensor_type(DType::kFloat, {{4, ""}});
  std::vector<float> big(4 * 100);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.25f;
  g->initializers.emplace("big", Tensor::from_vector(DType::kFloat, {4, 100}, big));
  g->value_types["big"] = tensor_type(DType::kFloat, {{4, ""}, {100, ""}});
  g->initializers.emplace("names", Tensor::from_strings({2}, {"alpha", "beta"}));
  g->value_types["names"] = tensor_type(DType::kString, {{2, ""}});

  g->add_node(make_node("add", "Add", {"x", "bias"}, {"a"}));
  g->value_types["a"] = tensor_type(DType::kFloat, {{-1, "batch"}, {4, ""}});

  ir::Node if_node = make_node("if", "If", {"cond"}, {"b"});
  ir::Attribute then_branch{.name = "then_branch", .type = ir::AttrType::kGraph};
  then_branch.graph = branch(g.get(), "Relu", "t_out");
  ir::Attribute else_branch{.name = "else_branch", .type = ir::AttrType::kGraph};
  else_branch.graph = branch(g.get(), "Neg", "e_out");
  if_node.attributes = {then_branch, else_branch};
  g->add_node(std::move(if_node));
  g->value_types["b"] = tensor_type(DType::kFloat, {{-1, "batch"}, {4, ""}});

  g->add_node(make_node("seq", "SequenceConstruct", {"a", "a"}, {"seq"}));
  g->value_types["seq"] = tensor_type(DType::kFloat, {{-1, "batch"}, {4, ""}}, ValueKind::kSequence);

  ir::Node custom = make_node("custom", "AllAttrs", {"a", "", "names"}, {"z"}, "test.custom");
  auto attr = [](const std::string& name, ir::AttrType type) {
    ir::Attribute a;
    a.name = name;
    a.type = type;
    return a;
  };
  ir::Attribute f = attr("f", ir::AttrType::kFloat);
  f.f = 1.5f;
  ir::Attribute i = attr("i", ir::AttrType::kInt);
  i.i = -7;
  ir::Attribute s = attr("s", ir::AttrType::kString);
  s.s = std::string("bytes\0with nul", 14);
  ir::Attribute fs_ = attr("floats", ir::AttrType::kFloats);
  fs_.floats = {0.5f, -2};
  ir::Attribute is = attr("ints", ir::AttrType::kInts);
  is.ints = {1, -2, 3};
  ir::Attribute ss = attr("strings", ir::AttrType::kStrings);
  ss.strings = {"a", "", "c"};
  ir::Attribute t = attr("tensor", ir::AttrType::kTensor);
  t.tensor = std::make_shared<Tensor>(Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{5, 6}));
  ir::Attribute ts = attr("tensors", ir::AttrType::kTensors);
  ts.tensors = {Tensor::from_vector(DType::kInt32, {1}, std::vector<int32_t>{9}), Tensor::from_strings({1}, {"x"})};
  ir::Attribute gr = attr("graph", ir::AttrType::kGraph);
  gr.graph = branch(g.get(), "Abs", "g_out");
  ir::Attribute grs = attr("graphs", ir::AttrType::kGraphs);
  grs.graphs = {branch(g.get(), "Abs", "g1_out"), branch(g.get(), "Neg", "g2_out")};
  custom.attributes = {f, i, s, fs_, is, ss, t, ts, gr, grs};
  g->add_node(std::move(custom));
  g->value_types["z"] = ir::ValueType{.kind = ValueKind::kUnknown};

  g->add_node(make_node("mm", "MatMul", {"a", "big"}, {"m"}));
  g->value_types["m"] = tensor_type(DType::kFloat, {{-1, "batch"}, {100, ""}});
  return g;
}

void expect_same_tensor(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.dims(), want.dims()) << what;
  if (want.is_string()) {
    EXPECT_EQ(got.strings(), want.strings()) << what;
  } else {
    ASSERT_EQ(got.byte_size(), want.byte_size()) << what;
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.byte_size()), 0) << what;
  }
}

void expect_same_type(const ir::Graph& got, const ir::Graph& want, const std::string& value) {
  const ir::ValueType* w = want.type_of(value);
  const ir::ValueType* g = got.type_of(value);
  ASSERT_NE(w, nullptr) << value;
  if (w->kind == ValueKind::kUnknown) return;  // written without a type: shape inference may fill it
  ASSERT_NE(g, nullptr) << value;
  EXPECT_EQ(g->kind, w->kind) << value;
  EXPECT_EQ(g->dtype, w->dtype) << value;
  ASSERT_EQ(g->has_shape, w->has_shape) << value;
  ASSERT_EQ(g->dims.size(), w->dims.size()) << value;
  for (size_t i = 0; i < w->dims.size(); ++i) {
    EXPECT_EQ(g->dims[i].value, w->dims[i].value) << value << " dim " << i;
    EXPECT_EQ(g->dims[i].symbol, w->dims[i].symbol) << value << " dim " << i;
  }
}

void expect_same_graph(const ir::Graph& got, const ir::Graph& want);

void expect_same_attribute(const ir::Attribute& got, const ir::Attribute& want) {
  SCOPED_TRACE("attribute " + want.name);
  EXPECT_EQ(got.name, want.name);
  ASSERT_EQ(got.type, want.type);
  EXPECT_EQ(got.f, want.f);
  EXPECT_EQ(got.i, want.i);
  EXPECT_EQ(got.s, want.s);
  EXPECT_EQ(got.floats, want.floats);
  EXPECT_EQ(got.ints, want.ints);
  EXPECT_EQ(got.strings, want.strings);
  ASSERT_EQ(got.tensor == nullptr, want.tensor == nullptr);
  if (want.tensor) expect_same_tensor(*got.tensor, *want.tensor, want.name);
  ASSERT_EQ(got.tensors.size(), want.tensors.size());
  for (size_t i = 0; i < want.tensors.size(); ++i) expect_same_tensor(got.tensors[i], want.tensors[i], want.name);
  ASSERT_EQ(got.graph == nullptr, want.graph == nullptr);
  if (want.graph) expect_same_graph(*got.graph, *want.graph);
  ASSERT_EQ(got.graphs.size(), want.graphs.size());
  for (size_t i = 0; i < want.graphs.size(); ++i) expect_same_graph(*got.graphs[i], *want.graphs[i]);
}

void expect_same_graph(const ir::Graph& got, const ir::Graph& want) {
  SCOPED_TRACE("graph " + want.name);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.inputs, want.inputs);
  EXPECT_EQ(got.outputs, want.outputs);
  EXPECT_EQ(got.opsets, want.opsets);
  ASSERT_EQ(got.initializers.size(), want.initializers.size());
  for (const auto& [name, t] : want.initializers) {
    ASSERT_TRUE(got.is_initializer(name)) << name;
    expect_same_tensor(got.initializers.at(name), t, name);
  }
  for (const std::string& v : want.inputs) expect_same_type(got, want, v);
  for (const std::string& v : want.outputs) expect_same_type(got, want, v);
  ASSERT_EQ(got.nodes().size(), want.nodes().size());
  for (size_t n = 0; n < want.nodes().size(); ++n) {
    const ir::Node& g = *got.nodes()[n];
    const ir::Node& w = *want.nodes()[n];
    SCOPED_TRACE("node " + w.label());
    EXPECT_EQ(g.name, w.name);
    EXPECT_EQ(g.op_type, w.op_type);
    EXPECT_EQ(g.domain, w.domain);
    EXPECT_EQ(g.inputs, w.inputs);
    EXPECT_EQ(g.outputs, w.outputs);
    ASSERT_EQ(g.attributes.size(), w.attributes.size());
    for (size_t a = 0; a < w.attributes.size(); ++a) expect_same_attribute(g.attributes[a], w.attributes[a]);
    for (const std::string& o : w.outputs)
      if (want.type_of(o)) expect_same_type(got, want, o);
  }
}

::onnx::ModelProto read_proto(const fs::path& path) {
  ::onnx::ModelProto model;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(model.ParseFromIstream(&in)) << path;
  return model;
}

TEST(ModelSaverTest, RoundTripsEveryAttributeKindSubgraphsAndSequences) {
  const fs::path dir = fresh_dir("round_trip");
  const fs::path path = dir / "model.onnx";
  auto want = sample_graph();
  ASSERT_TRUE(save_model(*want, SaveOptions{}, path.string()));
  auto loaded = load_model_file(path.string());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  EXPECT_EQ(loaded->ir_version, 8);
  EXPECT_EQ(loaded->producer, "loom");
  expect_same_graph(*loaded->graph, *want);
}

TEST(ModelSaverTest, LargeInitializersGoToAlignedExternalData) {
  const fs::path dir = fresh_dir("external");
  const fs::path path = dir / "model.onnx";
  auto want = sample_graph();
  ASSERT_TRUE(save_model(*want, SaveOptions{.external_data_threshold = 16}, path.string()));
  ASSERT_TRUE(fs::exists(dir / "model.onnx.data"));

  const ::onnx::ModelProto model = read_proto(path);
  std::map<std::string, const ::onnx::TensorProto*> by_name;
  for (const auto& t : model.graph().initializer()) by_name[t.name()] = &t;
  // 1600 bytes and 16 bytes: external; strings never are.
  for (const char* name : {"big", "bias"}) {
    const ::onnx::TensorProto& t = *by_name.at(name);
    ASSERT_EQ(t.data_location(), ::onnx::TensorProto_DataLocation_EXTERNAL) << name;
    EXPECT_FALSE(t.has_raw_data()) << name;
    std::map<std::string, std::string> keys;
    for (const auto& e : t.external_data()) keys[e.key()] = e.value();
    EXPECT_EQ(keys["location"], "model.onnx.data") << name;
    EXPECT_EQ(std::stoll(keys["offset"]) % 64, 0) << name;
    EXPECT_GT(std::stoll(keys["length"]), 0) << name;
  }
  EXPECT_NE(by_name.at("names")->data_location(), ::onnx::TensorProto_DataLocation_EXTERNAL);

  auto loaded = load_model_file(path.string());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  expect_same_graph(*loaded->graph, *want);
}

TEST(ModelSaverTest, SmallModelsStayInline) {
  const fs::path dir = fresh_dir("inline");
  const fs::path path = dir / "model.onnx";
  ASSERT_TRUE(save_model(*sample_graph(), SaveOptions{.external_data_threshold = SIZE_MAX}, path.string()));
  EXPECT_FALSE(fs::exists(dir / "model.onnx.data"));
  const ::onnx::ModelProto model = read_proto(path);
  for (const auto& t : model.graph().initializer())
    EXPECT_NE(t.data_location(), ::onnx::TensorProto_DataLocation_EXTERNAL) << t.name();
}

TEST(ModelSaverTest, InputThatIsAnInitializerStaysAnInput) {
  const fs::path path = fresh_dir("overridable") / "model.onnx";
  ASSERT_TRUE(save_model(*sample_graph(), SaveOptions{}, path.string()));
  const ::onnx::ModelProto model = read_proto(path);
  std::vector<std::string> inputs;
  for (const auto& vi : model.graph().input()) inputs.push_back(vi.name());
  EXPECT_EQ(inputs, (std::vector<std::string>{"x", "cond", "bias"}));
  // Intermediate values with known types are described.
  bool has_a = false;
  for (const auto& vi : model.graph().value_info()) has_a = has_a || vi.name() == "a";
  EXPECT_TRUE(has_a);
}

TEST(ModelSaverTest, UnwritablePathsFailNamingThePath) {
  const fs::path dir = fresh_dir("unwritable");
  const std::string missing_folder = (dir / "no_such_folder" / "model.onnx").string();
  Status st = save_model(*sample_graph(), SaveOptions{}, missing_folder);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find(missing_folder), std::string::npos) << st.message();

  st = save_model(*sample_graph(), SaveOptions{}, dir.string());
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find(dir.string()), std::string::npos) << st.message();

  st = save_model(*sample_graph(), SaveOptions{}, "");
  EXPECT_FALSE(st);
}

// SessionOptions::optimized_model_path: the session saves the graph it
// optimized; a path it cannot write fails session creation naming it.
std::string relu_model() {
  testing::ModelBuilder m(14);
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.node("Identity", {"x"}, {"i"});
  m.node("Relu", {"i"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
  return m.bytes();
}

TEST(ModelSaverTest, SessionSavesTheOptimizedGraph) {
  const fs::path path = fresh_dir("session") / "optimized.onnx";
  SessionOptions options;
  options.optimized_model_path = path.string();
  auto s = Session::create_from_bytes(testing::reference_env(), relu_model(), options);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto loaded = load_model_file(path.string());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  ASSERT_EQ(loaded->graph->nodes().size(), 1u);  // identity_elimination ran before saving
  EXPECT_EQ(loaded->graph->nodes()[0]->op_type, "Relu");
}

TEST(ModelSaverTest, SessionFailsWhenItCannotSave) {
  const std::string path = (fresh_dir("session_bad") / "missing" / "optimized.onnx").string();
  SessionOptions options;
  options.optimized_model_path = path;
  auto s = Session::create_from_bytes(testing::reference_env(), relu_model(), options);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find(path), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace loom::onnxio
