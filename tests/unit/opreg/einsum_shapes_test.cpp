// Einsum's in-process shape rule (shape_rules_einsum.cpp) against numpy's
// semantics: explicit and implicit outputs, "..." broadcast dims, repeated
// letters, and equations it must say nothing about.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/model_builder.h"
#include "onnx/model_loader.h"

namespace loom::opreg {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

// The type the in-process inference gives Einsum(equation) of inputs of
// `shapes` (-1: a symbolic dim named d<i>).
std::string einsum_type(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes) {
  testing::ModelBuilder m(12);
  std::vector<std::string> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back("x" + std::to_string(i));
    m.input(inputs.back(), kFloat, shapes[i]);
  }
  testing::add_string_attr(m.node("Einsum", inputs, {"y"}), "equation", equation);
  m.proto().mutable_graph()->add_output()->set_name("y");
  onnxio::LoadOptions o;
  o.onnx_inference = false;
  auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test", o);
  if (!loaded.has_value()) return "refused: " + loaded.status().message();
  const ir::ValueType* t = loaded->graph->type_of("y");
  return t == nullptr || !t->has_shape ? "unknown" : t->to_string();
}

TEST(EinsumShapesTest, ExplicitOutputsTakeTheNamedDims) {
  EXPECT_EQ(einsum_type("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}), "float[2,3,5]");
  EXPECT_EQ(einsum_type("ij->ji", {{3, 4}}), "float[4,3]");
  EXPECT_EQ(einsum_type("i,i->", {{7}, {7}}), "float[]");
  EXPECT_EQ(einsum_type("ii->i", {{3, 3}}), "float[3]");
  EXPECT_EQ(einsum_type("bhqd, bhkd -> bhqk", {{1, 2, 5, 8}, {1, 2, 6, 8}}), "float[1,2,5,6]");
  // A symbolic dim keeps its symbol; a known one wins over it.
  EXPECT_EQ(einsum_type("ij,jk->ik", {{-1, 4}, {-1, 5}}), "float[d0,5]");
}

TEST(EinsumShapesTest, ImplicitOutputsAreTheLettersUsedOnceInOrder) {
  EXPECT_EQ(einsum_type("ij,jk", {{3, 4}, {4, 5}}), "float[3,5]");
  EXPECT_EQ(einsum_type("ba", {{3, 4}}), "float[4,3]");
  EXPECT_EQ(einsum_type("ii", {{3, 3}}), "float[]");
}

TEST(EinsumShapesTest, EllipsisDimsBroadcast) {
  EXPECT_EQ(einsum_type("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 6}}), "float[2,5,3,6]");
  EXPECT_EQ(einsum_type("...ij", {{7, 3, 4}}), "float[7,3,4]");
  EXPECT_EQ(einsum_type("i...->...", {{3, 4, 5}}), "float[4,5]");
}

TEST(EinsumShapesTest, MalformedEquationsSayNothing) {
  for (const std::string eq : {"ij,jk->iz", "ij->i..j", "i.j->ij", "ij,jk", "ijk->ijk", "ij->ij->ij", "i$->i",
                               "....->", "ij,jk,kl->il", ""})
    EXPECT_EQ(einsum_type(eq, {{3, 4}, {5, 6}}), "unknown") << eq;
  EXPECT_EQ(einsum_type("ij,jk->ik", {{3, 4}, {5, 6}}), "unknown") << "j is 4 and 5";
}

}  // namespace
}  // namespace loom::opreg
