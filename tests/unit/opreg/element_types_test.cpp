// The registry's in-process element-type inference (opreg/infer/):
// each way an output's type is told, what stays unknown, and agreement
// with ONNX's own inference on every model of the ONNX backend node suites.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "common/model_builder.h"
#include "onnx/model_loader.h"
#include "opreg/infer/element_types.h"

namespace loom::opreg {
namespace {

using ::onnx::TensorProto;

onnxio::LoadOptions loom_only() {
  onnxio::LoadOptions o;
  o.onnx_inference = false;
  return o;
}

onnxio::LoadOptions onnx_only() {
  onnxio::LoadOptions o;
  o.loom_inference = false;
  return o;
}

DType dtype_of(const ir::Graph& g, const std::string& v) {
  const ir::ValueType* t = g.type_of(v);
  return t == nullptr ? DType::kUndefined : t->dtype;
}

std::shared_ptr<ir::Graph> load(testing::ModelBuilder& m, const onnxio::LoadOptions& o = loom_only()) {
  auto loaded = onnxio::load_model_bytes(m.bytes(), ".", "model", o);
  EXPECT_TRUE(loaded.has_value()) << loaded.status().message();
  return loaded.has_value() ? loaded->graph : std::make_shared<ir::Graph>();
}

TEST(ElementTypesTest, EachWayAnOutputTypeIsTold) {
  testing::ModelBuilder m(17);
  m.input("h", TensorProto::FLOAT16, {2});
  m.input("i", TensorProto::INT32, {2});
  m.node("Add", {"h", "h"}, {"sum"});                   // T bound by the inputs
  m.node("Shape", {"h"}, {"shape"});                    // a literal tensor(int64)
  testing::add_int_attr(m.node("Cast", {"i"}, {"cast"}), "to", TensorProto::DOUBLE);  // attribute
  m.node("ConstantOfShape", {"shape"}, {"zeros"});      // float by default
  m.node("Equal", {"i", "i"}, {"eq"});                  // T1 bound, T2 allows bool only
  m.node("CastLike", {"i", "h"}, {"like"});             // T2 bound by the second input
  m.node("NonZero", {"i"}, {"nz"});
  for (const char* out : {"sum", "shape", "cast", "zeros", "eq", "like", "nz"}) m.output(out, TensorProto::UNDEFINED, {});
  auto g = load(m);
  EXPECT_EQ(dtype_of(*g, "sum"), DType::kFloat16);
  EXPECT_EQ(dtype_of(*g, "shape"), DType::kInt64);
  EXPECT_EQ(dtype_of(*g, "cast"), DType::kDouble);
  EXPECT_EQ(dtype_of(*g, "zeros"), DType::kFloat);
  EXPECT_EQ(dtype_of(*g, "eq"), DType::kBool);
  EXPECT_EQ(dtype_of(*g, "like"), DType::kFloat16);
  EXPECT_EQ(dtype_of(*g, "nz"), DType::kInt64);
}

TEST(ElementTypesTest, ControlFlowOutputsTakeTheirBodysTypes) {
  testing::ModelBuilder m(17);
  m.input("c", TensorProto::BOOL, {});
  m.input("x", TensorProto::INT32, {2});
  ::onnx::GraphProto then_g, else_g;
  for (auto* g : {&then_g, &else_g}) {
    auto* n = g->add_node();
    n->set_op_type("Shape");
    n->add_input("x");
    n->add_output(g == &then_g ? "t" : "e");
    g->add_output()->set_name(n->output(0));  // untyped: inference says int64
  }
  auto& branch = m.node("If", {"c"}, {"y"}, "branch");
  for (const auto& [name, g] : {std::pair{"then_branch", &then_g}, std::pair{"else_branch", &else_g}}) {
    auto* a = branch.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    *a->mutable_g() = *g;
  }
  auto& ln = m.node("LayerNormalization", {"x2", "scale"}, {"ln", "mean", "inv"}, "ln");
  testing::add_int_attr(ln, "stash_type", TensorProto::DOUBLE);
  m.input("x2", TensorProto::FLOAT16, {2, 2});
  m.input("scale", TensorProto::FLOAT16, {2});
  for (const char* out : {"y", "ln", "mean", "inv"}) m.output(out, TensorProto::UNDEFINED, {});
  auto g = load(m);
  EXPECT_EQ(dtype_of(*g, "y"), DType::kInt64);
  EXPECT_EQ(dtype_of(*g, "ln"), DType::kFloat16);
  EXPECT_EQ(dtype_of(*g, "mean"), DType::kDouble);
  EXPECT_EQ(dtype_of(*g, "inv"), DType::kDouble);
}

TEST(ElementTypesTest, WhatCannotBeToldStaysUnknownAndNothingIsOverwritten) {
  testing::ModelBuilder m(17);
  m.input("x", TensorProto::UNDEFINED, {});  // no type in the file
  m.input("f", TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"r"});
  m.node("EyeLike", {"x"}, {"eye"});
  m.node("Neg", {"f"}, {"declared"});
  m.output("r", TensorProto::UNDEFINED, {});
  m.output("eye", TensorProto::UNDEFINED, {});
  m.output("declared", TensorProto::DOUBLE, {2});  // wrong, but the file's: kept
  auto g = load(m);
  EXPECT_EQ(dtype_of(*g, "r"), DType::kUndefined);
  EXPECT_EQ(dtype_of(*g, "eye"), DType::kUndefined);
  EXPECT_EQ(dtype_of(*g, "declared"), DType::kDouble);
}

// Every value both inferences type gets the same element type from each, on
// every model of the ONNX backend node suites; and the in-process one types
// most of what ONNX's does.
struct Agreement {
  int models = 0, values_onnx_typed = 0, values_both_typed = 0, contradictions = 0;
  std::string first_contradiction;
};

void compare_suite(const std::filesystem::path& dir, Agreement& a) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto model = entry.path() / "model.onnx";
    if (!std::filesystem::exists(model)) continue;
    // The file's own output and value types go, so that only inference
    // types the values.
    ::onnx::ModelProto proto;
    std::ifstream in(model, std::ios::binary);
    if (!proto.ParseFromIstream(&in)) continue;
    proto.mutable_graph()->clear_value_info();
    for (auto& out : *proto.mutable_graph()->mutable_output()) out.clear_type();
    const std::string bytes = proto.SerializeAsString();
    auto with_onnx = onnxio::load_model_bytes(bytes, entry.path().string(), "model", onnx_only());
    auto with_loom = onnxio::load_model_bytes(bytes, entry.path().string(), "model", loom_only());
    if (!with_onnx.has_value() || !with_loom.has_value()) continue;  // refused models: the conformance suites' business
    ++a.models;
    for (const auto& [name, onnx_type] : with_onnx->graph->value_types) {
      if (onnx_type.kind != ValueKind::kTensor || onnx_type.dtype == DType::kUndefined) continue;
      if (with_onnx->graph->is_initializer(name) || with_onnx->graph->is_graph_input(name)) continue;
      ++a.values_onnx_typed;
      const DType loom = dtype_of(*with_loom->graph, name);
      if (loom == DType::kUndefined) continue;
      ++a.values_both_typed;
      if (loom != onnx_type.dtype && a.contradictions++ == 0)
        a.first_contradiction = entry.path().filename().string() + ": '" + name + "' is " + dtype_name(loom) +
                                " in process, " + dtype_name(onnx_type.dtype) + " by ONNX";
    }
  }
}

TEST(ElementTypesTest, AgreesWithOnnxInferenceOnTheBackendNodeSuites) {
  Agreement a;
  for (const std::string dir : {std::string("/usr/share/libonnx-testdata/data/node"),
                                std::string(LOOM_SOURCE_DIR) + "/../shared/onnx-backend-tests/node"})
    if (std::filesystem::is_directory(dir)) compare_suite(dir, a);
  if (a.models == 0) GTEST_SKIP() << "no ONNX backend node suite here";
  EXPECT_EQ(a.contradictions, 0) << a.first_contradiction;
  const double coverage = a.values_onnx_typed ? double(a.values_both_typed) / a.values_onnx_typed : 1.0;
  std::printf("%d models: ONNX typed %d values, the in-process inference %d of them (%.1f %%)\n", a.models,
              a.values_onnx_typed, a.values_both_typed, 100.0 * coverage);
  // 99.2 % when written (2734 models, 14542 values): what is left is the
  // training ops' heterogeneous outputs, optionals and a few ops whose
  // output type an attribute of the newer opsets picks.
  EXPECT_GE(coverage, 0.99);
}

}  // namespace
}  // namespace loom::opreg
