// Symbolic shape propagation keeps dim symbols through shape arithmetic,
// dynamic slices, gathers, broadcasts, MatMul, Transpose and reductions.
#include "opreg/infer/shapes.h"

#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <vector>

#include "common/model_builder.h"
#include "onnx/model_loader.h"

namespace loom::opreg {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

// Loaded with ONNX's inference only, so that each test sees what the
// in-process inference adds.
onnxio::LoadOptions onnx_only() {
  onnxio::LoadOptions o;
  o.loom_inference = false;
  return o;
}

// Loaded with the in-process inference alone.
onnxio::LoadOptions in_process_only() {
  onnxio::LoadOptions o;
  o.onnx_inference = false;
  return o;
}

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
  auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test", onnx_only());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  ir::Graph& g = *loaded->graph;
  EXPECT_GT(infer_shapes(g), 0);
  EXPECT_EQ(dims_of(g, "positions"), "1,seq");
  EXPECT_EQ(dims_of(g, "pe"), "1,seq,8");
  EXPECT_EQ(dims_of(g, "h"), "1,seq,8");
  EXPECT_EQ(dims_of(g, "hh"), "1,seq,2,4");
  EXPECT_EQ(dims_of(g, "q"), "1,2,seq,4");
  EXPECT_EQ(dims_of(g, "scores"), "1,2,seq,seq");
  EXPECT_EQ(dims_of(g, "m"), "1,2,seq,1");
  // A second run learns nothing new: propagation converges.
  EXPECT_EQ(infer_shapes(g), 0);
}

// A ResNet downsampling block on [N, 8, h, w]: the 3x3 stride-2 pad-1 conv
// and the 1x1 stride-2 shortcut shrink h the same way, so the residual Add
// reads equal symbols; max pooling with ceil_mode, SAME_UPPER and known dims.
TEST(SymbolicShapesTest, WindowedOpsShrinkSymbolsCanonically) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {-1, 8, -1, -1});
  auto* dims = m.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(0)->set_dim_param("N");
  dims->mutable_dim(2)->set_dim_param("h");
  dims->mutable_dim(3)->set_dim_param("w");
  m.input("k", kFloat, {1, 8, 10, 12});
  m.float_initializer("w3", {16, 8, 3, 3}, std::vector<float>(16 * 8 * 9, 0.1f));
  m.float_initializer("w1", {16, 8, 1, 1}, std::vector<float>(16 * 8, 0.1f));
  auto& a = m.node("Conv", {"x", "w3"}, {"a"});
  testing::add_ints_attr(a, "strides", {2, 2});
  testing::add_ints_attr(a, "pads", {1, 1, 1, 1});
  testing::add_ints_attr(m.node("Conv", {"x", "w1"}, {"b"}), "strides", {2, 2});
  m.node("Add", {"a", "b"}, {"s"});
  auto& same = m.node("Conv", {"x", "w3"}, {"c"});
  testing::add_ints_attr(same, "pads", {1, 1, 1, 1});
  auto& pool = m.node("MaxPool", {"x"}, {"p"});
  testing::add_ints_attr(pool, "kernel_shape", {3, 3});
  testing::add_ints_attr(pool, "strides", {2, 2});
  testing::add_int_attr(pool, "ceil_mode", 1);
  auto& upper = m.node("AveragePool", {"x"}, {"u"});
  testing::add_ints_attr(upper, "kernel_shape", {2, 2});
  testing::add_ints_attr(upper, "strides", {2, 2});
  testing::add_string_attr(upper, "auto_pad", "SAME_UPPER");
  auto& fixed = m.node("Conv", {"k", "w3"}, {"f"});
  testing::add_ints_attr(fixed, "strides", {2, 2});
  for (const char* o : {"s", "c", "p", "u", "f"}) m.output(o, kFloat, {});
  for (int i = 0; i < 5; ++i) m.proto().mutable_graph()->mutable_output(i)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test", onnx_only());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  ir::Graph& g = *loaded->graph;
  infer_shapes(g);
  EXPECT_EQ(dims_of(g, "a"), "N,16,((h-1)//2+1),((w-1)//2+1)");
  EXPECT_EQ(dims_of(g, "b"), dims_of(g, "a")) << "both branches shrink h alike";
  EXPECT_EQ(dims_of(g, "s"), dims_of(g, "a"));
  EXPECT_EQ(dims_of(g, "c"), "N,16,h,w") << "3x3 pad 1 stride 1 keeps the symbol";
  EXPECT_EQ(dims_of(g, "p"), "N,8,(ceil((h-3)/2)+1),(ceil((w-3)/2)+1)");
  EXPECT_EQ(dims_of(g, "u"), "N,8,(ceil(h/2)),(ceil(w/2))");
  EXPECT_EQ(dims_of(g, "f"), "1,16,4,5");
}

TEST(SymbolicShapesTest, NeverContradictsAKnownDim) {
  testing::ModelBuilder m(14);
  m.input("a", kFloat, {2, -1});
  m.input("b", kFloat, {-1, 3});
  m.node("Add", {"a", "b"}, {"c"});
  m.output("c", kFloat, {2, 3});
  auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test", onnx_only());
  ASSERT_TRUE(loaded.has_value());
  ir::Graph& g = *loaded->graph;
  infer_shapes(g);
  EXPECT_EQ(dims_of(g, "c"), "2,3");
}

// Where a shape is computed at run time (an input), the outputs still get
// their rank, as ONNX's inference gives it.
TEST(SymbolicShapesTest, ShapesKnownOnlyAtRunTimeStillGiveTheRank) {
  testing::ModelBuilder m(18);
  m.input("x", kFloat, {2, 3});
  m.input("shape3", ::onnx::TensorProto::INT64, {3});
  m.input("sizes", ::onnx::TensorProto::INT64, {2});
  m.input("pads", ::onnx::TensorProto::INT64, {4});
  m.node("Expand", {"x", "shape3"}, {"expanded"});
  m.node("ConstantOfShape", {"shape3"}, {"filled"});
  m.node("Resize", {"x", "", "", "sizes"}, {"resized"});
  m.node("Pad", {"x", "pads"}, {"padded"});
  m.node("Unique", {"x"}, {"u", "u_indices", "u_inverse", "u_counts"});
  testing::add_int_attr(m.node("Unique", {"x"}, {"rows", "r_indices", "r_inverse", "r_counts"}), "axis", 0);
  for (const char* out : {"expanded", "filled", "resized", "padded", "u", "u_inverse", "rows", "r_inverse"})
    m.proto().mutable_graph()->add_output()->set_name(out);
  auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test", in_process_only());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  const ir::Graph& g = *loaded->graph;
  EXPECT_EQ(dims_of(g, "expanded"), "?,?,?");
  EXPECT_EQ(dims_of(g, "filled"), "?,?,?");
  EXPECT_EQ(dims_of(g, "resized"), "?,?");
  EXPECT_EQ(dims_of(g, "padded"), "?,?");
  EXPECT_EQ(dims_of(g, "u"), "?");
  EXPECT_EQ(dims_of(g, "u_inverse"), "6");
  EXPECT_EQ(dims_of(g, "rows"), "?,3");
  EXPECT_EQ(dims_of(g, "r_inverse"), "2");
}

// Rules read what a model gives them, however absurd: sizes that overflow,
// steps of INT64_MIN, negative split sizes. They say nothing then (the
// kernels refuse such nodes when they run), and never crash or wrap.
TEST(SymbolicShapesTest, HostileAttributesAndConstantsLeaveShapesUnknown) {
  constexpr int64_t kMax = INT64_MAX, kMin = INT64_MIN;
  struct Case {
    const char* name;
    std::function<void(testing::ModelBuilder&)> build;
  };
  const std::vector<Case> cases = {
      {"tile past int64", [](auto& m) {
         m.int64_initializer("r", {2}, {kMax, 2});
         m.node("Tile", {"x", "r"}, {"y"});
       }},
      {"pad past int64", [](auto& m) {
         m.int64_initializer("p", {4}, {0, kMax, 0, kMax});
         m.node("Pad", {"x", "p"}, {"y"});
       }},
      {"slice step int64 min", [](auto& m) {
         m.int64_initializer("s", {1}, {kMax});
         m.int64_initializer("e", {1}, {kMin});
         m.int64_initializer("a", {1}, {1});
         m.int64_initializer("st", {1}, {kMin});
         m.node("Slice", {"x", "s", "e", "a", "st"}, {"y"});
       }},
      {"range of int64 min by -1", [](auto& m) {
         m.int64_initializer("start", {}, {0});
         m.int64_initializer("limit", {}, {kMin});
         m.int64_initializer("delta", {}, {-1});
         m.node("Range", {"start", "limit", "delta"}, {"y"});
       }},
      {"split with negative sizes", [](auto& m) {
         m.int64_initializer("sizes", {2}, {-1, 4});
         testing::add_int_attr(m.node("Split", {"x", "sizes"}, {"y", "z"}), "axis", 1);
       }},
      {"reshape with two -1", [](auto& m) {
         m.int64_initializer("shape", {2}, {-1, -1});
         m.node("Reshape", {"x", "shape"}, {"y"});
       }},
      {"conv transpose with huge strides", [](auto& m) {
         m.float_initializer("w", {1, 1, 1, 1}, {1});
         testing::add_ints_attr(m.node("ConvTranspose", {"x4", "w"}, {"y"}), "strides", {kMax, kMax});
       }},
  };
  for (const Case& c : cases) {
    testing::ModelBuilder m(18);
    m.input("x", kFloat, {2, 3});
    m.input("x4", kFloat, {1, 1, 2, 3});
    c.build(m);
    m.output("y", ::onnx::TensorProto::UNDEFINED, {});
    auto loaded = onnxio::load_model_bytes(m.bytes(), "", "test", in_process_only());
    ASSERT_TRUE(loaded.has_value()) << c.name << ": " << loaded.status().message();
    const ir::ValueType* t = loaded->graph->type_of("y");
    if (t == nullptr || !t->has_shape) continue;
    for (const DimInfo& d : t->dims) EXPECT_GE(d.value, -1) << c.name << ": " << t->to_string();
  }
}

}  // namespace
}  // namespace loom::opreg
