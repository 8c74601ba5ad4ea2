// Symbolic shape propagation keeps dim symbols through shape arithmetic,
// dynamic slices, gathers, broadcasts, MatMul, Transpose and reductions.
#include "transform/symbolic_shapes.h"

#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "onnx/model_loader.h"

namespace loom::transform {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

std::string dims_of(const ir::Graph& g, const std::string& v) {
  const ir::ValueType* t = g.type_of(v);
  if (t == nullptr || !t->has_shape) return "?";
  std::string s;
  for (const DimInfo& d : t->dims) {
    if (!s.empty()) s += ",";
    s += d.value >= 0 ? std::to_string(d.value) : (d.symbol.empty() || d.symbol.rfind("unk__", 0) == 0 ? "?" : d.symbol);
  }
  return s;
}

TEST(SymbolicShapesTest, EmbeddingAndHeadSplitKeepTheSequenceSymbol) {
  // ids [1, seq]; positions = table[:, :seq] via Shape/Gather/Unsqueeze;
  // h = word[ids] + pos_table[positions]; heads = Reshape(h, [0, 0, 2, 4]);
  // scores = MatMul(Transpose(heads), Transpose(heads)^T); mean over the last axis.
  testing::ModelBuilder m(14);
  m.input("ids", ::onnx::TensorProto::INT64, {1, -1});
  m.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("seq");
  m.float_initializer("word", {10, 8}, std::vector<float>(80, 0.1f));
  m.float_initializer("pos", {16, 8}, std::vector<float>(128, 0.2f));
  m.int64_initializer("positions_table", {1, 16}, std::vector<int64_t>(16, 0));
  m.int64_initializer("one", {}, {1});
  m.int64_initializer("zero1", {1}, {0});
  m.int64_initializer("axis1", {1}, {1});
  m.int64_initializer("heads", {4}, {0, 0, 2, 4});
  m.node("Shape", {"ids"}, {"s"});
  m.node("Gather", {"s", "one"}, {"n"});
  m.node("Unsqueeze", {"n", "zero1"}, {"n1"});
  m.node("Slice", {"positions_table", "zero1", "n1", "axis1"}, {"positions"});
  m.node("Gather", {"word", "ids"}, {"we"});
  m.node("Gather", {"pos", "positions"}, {"pe"});
  m.node("Add", {"we", "pe"}, {"h"});
  m.node("Reshape", {"h", "heads"}, {"hh"});
  testing::add_ints_attr(m.node("Transpose", {"hh"}, {"q"}), "perm", {0, 2, 1, 3});
  testing::add_ints_attr(m.node("Transpose", {"hh"}, {"kt"}), "perm", {0, 2, 3, 1});
  m.node("MatMul", {"q", "kt"}, {"scores"});
  testing::add_ints_attr(m.node("ReduceMean", {"scores"}, {"m"}), "axes", {-1});
  m.output("m", kFloat, {});
  m.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test");
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  ir::Graph& g = *loaded->graph;
  EXPECT_GT(propagate_symbolic_shapes(g), 0);
  EXPECT_EQ(dims_of(g, "positions"), "1,seq");
  EXPECT_EQ(dims_of(g, "pe"), "1,seq,8");
  EXPECT_EQ(dims_of(g, "h"), "1,seq,8");
  EXPECT_EQ(dims_of(g, "hh"), "1,seq,2,4");
  EXPECT_EQ(dims_of(g, "q"), "1,2,seq,4");
  EXPECT_EQ(dims_of(g, "scores"), "1,2,seq,seq");
  EXPECT_EQ(dims_of(g, "m"), "1,2,seq,1");
  // A second run learns nothing new: propagation converges.
  EXPECT_EQ(propagate_symbolic_shapes(g), 0);
}

TEST(SymbolicShapesTest, NeverContradictsAKnownDim) {
  testing::ModelBuilder m(14);
  m.input("a", kFloat, {2, -1});
  m.input("b", kFloat, {-1, 3});
  m.node("Add", {"a", "b"}, {"c"});
  m.output("c", kFloat, {2, 3});
  auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test");
  ASSERT_TRUE(loaded.has_value());
  ir::Graph& g = *loaded->graph;
  propagate_symbolic_shapes(g);
  EXPECT_EQ(dims_of(g, "c"), "2,3");
}

}  // namespace
}  // namespace loom::transform
