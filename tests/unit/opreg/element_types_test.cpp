// The registry's in-process element-type inference (opreg/infer/): each
// way an output's type is told, and what stays unknown (agreement with
// ONNX's inference on the backend suites: inference_agreement_test.cpp).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace loom::opreg
