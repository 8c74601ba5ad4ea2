// Reference EP sequence, optional and control-flow kernels through the public
// API (Session::run_values): sequence ops, optionals, If, Loop, Scan (opsets 8
// and 9+) and SequenceMap, with models built in memory.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;
using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;
using ::onnx::ValueInfoProto;

constexpr int32_t kFloat = TensorProto::FLOAT;
constexpr int32_t kInt64 = TensorProto::INT64;
constexpr int32_t kBool = TensorProto::BOOL;

// --- proto helpers ----------------------------------------------------------

void tensor_type(ValueInfoProto* vi, const std::string& name, int32_t elem, const std::vector<int64_t>& dims,
                 bool has_shape = true) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  if (!has_shape) return;
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d < 0) dim->set_dim_param("n" + std::to_string(shape->dim_size()));
    else dim->set_dim_value(d);
  }
}
void sequence_type(ValueInfoProto* vi, const std::string& name, int32_t elem) {
  vi->set_name(name);
  vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(elem);
}
void optional_tensor_type(ValueInfoProto* vi, const std::string& name, int32_t elem) {
  vi->set_name(name);
  vi->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(elem);
}

NodeProto* add_node(GraphProto* g, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()) + "_" + (out.empty() ? "" : out[0]));
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}
void int_attr(NodeProto* n, const std::string& name, int64_t v) { testing::add_int_attr(*n, name, v); }
void ints_attr(NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void graph_attr(NodeProto* n, const std::string& name, const GraphProto& g) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::GRAPH);
  *a->mutable_g() = g;
}
// A Constant node producing an int64 tensor (scalar when dims is empty).
void int64_constant(GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& values) {
  NodeProto* n = add_node(g, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(AttributeProto::TENSOR);
  TensorProto* t = a->mutable_t();
  t->set_data_type(kInt64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}
void float_constant(GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<float>& values) {
  NodeProto* n = add_node(g, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(AttributeProto::TENSOR);
  TensorProto* t = a->mutable_t();
  t->set_data_type(kFloat);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

Tensor int64_tensor(Dims dims, std::vector<int64_t> v) { return Tensor::from_vector(DType::kInt64, std::move(dims), v); }
Tensor bool_scalar(bool b) { return Tensor::from_vector(DType::kBool, {}, std::vector<uint8_t>{b ? uint8_t{1} : uint8_t{0}}); }
std::vector<int64_t> int64_values(const Tensor& t) {
  const int64_t* p = t.data_as<int64_t>();
  return std::vector<int64_t>(p, p + t.element_count());
}

std::unique_ptr<Session> make_session(testing::ModelBuilder& m) {
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s.has_value() ? std::move(*s) : nullptr;
}

// --- sequences --------------------------------------------------------------

TEST(ReferenceSequenceTest, ConstructInsertEraseAtLengthConcat) {
  testing::ModelBuilder m(17);
  m.input("X", kFloat, {2, 3}).input("Y", kFloat, {2, 3}).input("Z", kFloat, {1, 3});
  GraphProto* g = m.proto().mutable_graph();
  int64_constant(g, "zero", {}, {0});
  int64_constant(g, "one", {}, {1});
  add_node(g, "SequenceConstruct", {"X", "Y"}, {"s1"});
  add_node(g, "SequenceInsert", {"s1", "Z", "zero"}, {"s2"});  // [Z, X, Y]
  add_node(g, "SequenceErase", {"s2"}, {"s3"});                 // [Z, X]
  add_node(g, "SequenceLength", {"s3"}, {"len"});
  add_node(g, "SequenceAt", {"s3", "one"}, {"at"});
  int_attr(add_node(g, "ConcatFromSequence", {"s3"}, {"cat"}), "axis", 0);
  m.output("len", kInt64, {}).output("at", kFloat, {2, 3}).output("cat", kFloat, {3, 3});
  sequence_type(g->add_output(), "s3", kFloat);
  auto s = make_session(m);
  ASSERT_TRUE(s);
  const std::vector<float> x{1, 2, 3, 4, 5, 6}, y{7, 8, 9, 10, 11, 12}, z{-1, -2, -3};
  auto out = s->run_values({{"X", float_tensor({2, 3}, x)}, {"Y", float_tensor({2, 3}, y)}, {"Z", float_tensor({1, 3}, z)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ(int64_values((*out)[0].tensor()), std::vector<int64_t>{2});
  EXPECT_EQ(values_of((*out)[1].tensor()), x);
  EXPECT_EQ((*out)[2].tensor().dims(), (Dims{3, 3}));
  EXPECT_EQ(values_of((*out)[2].tensor()), (std::vector<float>{-1, -2, -3, 1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE((*out)[3].is_sequence());
  ASSERT_EQ((*out)[3].elements().size(), 2u);
  EXPECT_EQ(values_of((*out)[3].elements()[0]), z);
  EXPECT_EQ(values_of((*out)[3].elements()[1]), x);
}

TEST(ReferenceSequenceTest, SplitToSequenceAndStack) {
  testing::ModelBuilder m(17);
  m.input("X", kFloat, {2, 5});
  GraphProto* g = m.proto().mutable_graph();
  int64_constant(g, "two", {}, {2});
  int_attr(add_node(g, "SplitToSequence", {"X", "two"}, {"chunks"}), "axis", 1);  // [2,2] [2,2] [2,1]
  int_attr(add_node(g, "SplitToSequence", {"X"}, {"rows"}), "keepdims", 0);       // [5] [5]
  NodeProto* st = add_node(g, "ConcatFromSequence", {"rows"}, {"stacked"});
  int_attr(st, "axis", -1);
  int_attr(st, "new_axis", 1);  // [5, 2]
  sequence_type(g->add_output(), "chunks", kFloat);
  m.output("stacked", kFloat, {5, 2});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto out = s->run_values({{"X", float_tensor({2, 5}, x)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const auto& chunks = (*out)[0].elements();
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].dims(), (Dims{2, 2}));
  EXPECT_EQ(values_of(chunks[1]), (std::vector<float>{2, 3, 7, 8}));
  EXPECT_EQ(chunks[2].dims(), (Dims{2, 1}));
  EXPECT_EQ(values_of(chunks[2]), (std::vector<float>{4, 9}));
  EXPECT_EQ((*out)[1].tensor().dims(), (Dims{5, 2}));
  EXPECT_EQ(values_of((*out)[1].tensor()), (std::vector<float>{0, 5, 1, 6, 2, 7, 3, 8, 4, 9}));
}

TEST(ReferenceSequenceTest, SequenceInputIdentityAndNegativeIndex) {
  testing::ModelBuilder m(17);
  GraphProto* g = m.proto().mutable_graph();
  sequence_type(g->add_input(), "seq", kFloat);
  int64_constant(g, "minus_one", {}, {-1});
  add_node(g, "Identity", {"seq"}, {"copy"});
  add_node(g, "SequenceAt", {"seq", "minus_one"}, {"last"});
  sequence_type(g->add_output(), "copy", kFloat);
  m.output("last", kFloat, {-1});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  Value seq = Value::sequence(DType::kFloat, {float_tensor({2}, {1, 2}), float_tensor({3}, {3, 4, 5})});
  auto out = s->run_values({{"seq", seq}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_TRUE((*out)[0].is_sequence());
  ASSERT_EQ((*out)[0].elements().size(), 2u);
  EXPECT_EQ(values_of((*out)[0].elements()[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values_of((*out)[1].tensor()), (std::vector<float>{3, 4, 5}));
}

TEST(ReferenceSequenceTest, OutOfRangePositionIsAnError) {
  testing::ModelBuilder m(17);
  m.input("X", kFloat, {2});
  GraphProto* g = m.proto().mutable_graph();
  int64_constant(g, "five", {}, {5});
  add_node(g, "SequenceConstruct", {"X", "X"}, {"s"});
  add_node(g, "SequenceAt", {"s", "five"}, {"y"});
  m.output("y", kFloat, {2});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto out = s->run_values({{"X", float_tensor({2}, {1, 2})}});
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("SequenceAt"), std::string::npos) << out.status().message();
}

// --- optionals --------------------------------------------------------------

TEST(ReferenceOptionalTest, WrapQueryAndUnwrap) {
  testing::ModelBuilder m(17);
  m.input("X", kFloat, {2});
  GraphProto* g = m.proto().mutable_graph();
  add_node(g, "Optional", {"X"}, {"o"});
  add_node(g, "OptionalHasElement", {"o"}, {"has"});
  add_node(g, "OptionalGetElement", {"o"}, {"got"});
  NodeProto* e = add_node(g, "Optional", {}, {"empty"});
  auto* a = e->add_attribute();
  a->set_name("type");
  a->set_type(AttributeProto::TYPE_PROTO);
  a->mutable_tp()->mutable_tensor_type()->set_elem_type(kFloat);
  add_node(g, "OptionalHasElement", {"empty"}, {"has_empty"});
  m.output("has", kBool, {}).output("got", kFloat, {2}).output("has_empty", kBool, {});
  optional_tensor_type(g->add_output(), "empty", kFloat);
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto out = s->run_values({{"X", float_tensor({2}, {4, 5})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_TRUE((*out)[0].tensor().data_as<bool>()[0]);
  EXPECT_EQ(values_of((*out)[1].tensor()), (std::vector<float>{4, 5}));
  EXPECT_FALSE((*out)[2].tensor().data_as<bool>()[0]);
  EXPECT_TRUE((*out)[3].is_none());
}

TEST(ReferenceOptionalTest, EmptyOptionalInputPassesThroughIdentityAndCannotBeUnwrapped) {
  testing::ModelBuilder m(17);
  GraphProto* g = m.proto().mutable_graph();
  optional_tensor_type(g->add_input(), "opt", kFloat);
  add_node(g, "Identity", {"opt"}, {"copy"});
  add_node(g, "OptionalHasElement", {"opt"}, {"has"});
  optional_tensor_type(g->add_output(), "copy", kFloat);
  m.output("has", kBool, {});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto out = s->run_values({{"opt", Value::none()}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_TRUE((*out)[0].is_none());
  EXPECT_FALSE((*out)[1].tensor().data_as<bool>()[0]);
  auto full = s->run_values({{"opt", Value(float_tensor({1}, {3}))}});
  ASSERT_TRUE(full.has_value()) << full.status().message();
  EXPECT_EQ(values_of((*full)[0].tensor()), (std::vector<float>{3}));
  EXPECT_TRUE((*full)[1].tensor().data_as<bool>()[0]);

  testing::ModelBuilder m2(17);
  GraphProto* g2 = m2.proto().mutable_graph();
  optional_tensor_type(g2->add_input(), "opt", kFloat);
  add_node(g2, "OptionalGetElement", {"opt"}, {"y"});
  m2.output("y", kFloat, {-1});
  auto s2 = make_session(m2);
  ASSERT_TRUE(s2);
  auto bad = s2->run_values({{"opt", Value::none()}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("OptionalGetElement"), std::string::npos) << bad.status().message();
}

// --- If ---------------------------------------------------------------------

TEST(ReferenceControlFlowTest, IfPicksABranchThatReadsOuterValues) {
  testing::ModelBuilder m(17);
  m.input("cond", kBool, {}).input("x", kFloat, {2});
  GraphProto* g = m.proto().mutable_graph();
  float_constant(g, "one", {}, {1});
  GraphProto then_g, else_g;
  then_g.set_name("then");
  else_g.set_name("else");
  add_node(&then_g, "Add", {"x", "one"}, {"t"});
  add_node(&then_g, "SequenceConstruct", {"x", "t"}, {"ts"});
  tensor_type(then_g.add_output(), "t", kFloat, {2});
  sequence_type(then_g.add_output(), "ts", kFloat);
  add_node(&else_g, "Sub", {"x", "one"}, {"e"});
  add_node(&else_g, "SequenceEmpty", {}, {"es"});
  tensor_type(else_g.add_output(), "e", kFloat, {2});
  sequence_type(else_g.add_output(), "es", kFloat);
  NodeProto* n = add_node(g, "If", {"cond"}, {"y", "ys"});
  graph_attr(n, "then_branch", then_g);
  graph_attr(n, "else_branch", else_g);
  m.output("y", kFloat, {2});
  sequence_type(g->add_output(), "ys", kFloat);
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto t = s->run_values({{"cond", bool_scalar(true)}, {"x", float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(t.has_value()) << t.status().message();
  EXPECT_EQ(values_of((*t)[0].tensor()), (std::vector<float>{2, 3}));
  ASSERT_EQ((*t)[1].elements().size(), 2u);
  auto e = s->run_values({{"cond", bool_scalar(false)}, {"x", float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(e.has_value()) << e.status().message();
  EXPECT_EQ(values_of((*e)[0].tensor()), (std::vector<float>{0, 1}));
  EXPECT_TRUE((*e)[1].is_sequence());
  EXPECT_TRUE((*e)[1].elements().empty());
}

// --- Loop -------------------------------------------------------------------

// Loop body: sum_out = sum_in + x (outer x); scan output = sum_out;
// cond_out = iter < 3.
GraphProto loop_body() {
  GraphProto b;
  b.set_name("body");
  tensor_type(b.add_input(), "i", kInt64, {});
  tensor_type(b.add_input(), "c", kBool, {});
  tensor_type(b.add_input(), "sum_in", kFloat, {2});
  int64_constant(&b, "three", {}, {3});
  add_node(&b, "Less", {"i", "three"}, {"c_out"});
  add_node(&b, "Add", {"sum_in", "x"}, {"sum_out"});
  add_node(&b, "Identity", {"sum_out"}, {"scan_out"});
  tensor_type(b.add_output(), "c_out", kBool, {});
  tensor_type(b.add_output(), "sum_out", kFloat, {2});
  tensor_type(b.add_output(), "scan_out", kFloat, {2});
  return b;
}

std::unique_ptr<Session> loop_session(bool with_cond) {
  testing::ModelBuilder m(17);
  m.input("M", kInt64, {});
  if (with_cond) m.input("cond", kBool, {});
  m.input("x", kFloat, {2}).input("init", kFloat, {2});
  GraphProto* g = m.proto().mutable_graph();
  NodeProto* n = add_node(g, "Loop", {"M", with_cond ? "cond" : "", "init"}, {"sum", "scans"});
  graph_attr(n, "body", loop_body());
  m.output("sum", kFloat, {2}).output("scans", kFloat, {-1, 2});
  return make_session(m);
}

TEST(ReferenceControlFlowTest, LoopStopsOnCondAndStacksScanOutputs) {
  auto s = loop_session(true);
  ASSERT_TRUE(s);
  auto out = s->run_values({{"M", int64_tensor({}, {10})},
                            {"cond", bool_scalar(true)},
                            {"x", float_tensor({2}, {1, 10})},
                            {"init", float_tensor({2}, {0, 0})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // Iterations 0..3 run (after iteration 3, cond becomes false).
  EXPECT_EQ(values_of((*out)[0].tensor()), (std::vector<float>{4, 40}));
  EXPECT_EQ((*out)[1].tensor().dims(), (Dims{4, 2}));
  EXPECT_EQ(values_of((*out)[1].tensor()), (std::vector<float>{1, 10, 2, 20, 3, 30, 4, 40}));
  // cond false up front: no iteration, carried values pass through.
  auto none = s->run_values({{"M", int64_tensor({}, {10})},
                             {"cond", bool_scalar(false)},
                             {"x", float_tensor({2}, {1, 10})},
                             {"init", float_tensor({2}, {5, 6})}});
  ASSERT_TRUE(none.has_value()) << none.status().message();
  EXPECT_EQ(values_of((*none)[0].tensor()), (std::vector<float>{5, 6}));
  EXPECT_EQ((*none)[1].tensor().element_count(), 0);
}

TEST(ReferenceControlFlowTest, LoopWithoutCondRunsTripCount) {
  auto s = loop_session(false);
  ASSERT_TRUE(s);
  auto out = s->run_values(
      {{"M", int64_tensor({}, {6})}, {"x", float_tensor({2}, {1, 2})}, {"init", float_tensor({2}, {0, 0})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // The body's cond output is ignored in a for-loop.
  EXPECT_EQ(values_of((*out)[0].tensor()), (std::vector<float>{6, 12}));
  EXPECT_EQ((*out)[1].tensor().dims(), (Dims{6, 2}));
}

TEST(ReferenceControlFlowTest, LoopCarriesASequence) {
  testing::ModelBuilder m(17);
  m.input("M", kInt64, {}).input("x", kFloat, {2});
  GraphProto* g = m.proto().mutable_graph();
  add_node(g, "SequenceEmpty", {}, {"empty"});
  GraphProto b;
  b.set_name("body");
  tensor_type(b.add_input(), "i", kInt64, {});
  tensor_type(b.add_input(), "c", kBool, {});
  sequence_type(b.add_input(), "seq_in", kFloat);
  add_node(&b, "Identity", {"c"}, {"c_out"});
  add_node(&b, "SequenceInsert", {"seq_in", "x"}, {"seq_out"});
  tensor_type(b.add_output(), "c_out", kBool, {});
  sequence_type(b.add_output(), "seq_out", kFloat);
  graph_attr(add_node(g, "Loop", {"M", "", "empty"}, {"seq"}), "body", b);
  add_node(g, "SequenceLength", {"seq"}, {"n"});
  m.output("n", kInt64, {});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto out = s->run_values({{"M", int64_tensor({}, {3})}, {"x", float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(int64_values((*out)[0].tensor()), std::vector<int64_t>{3});
}

// --- Scan -------------------------------------------------------------------

GraphProto scan_body(const std::vector<int64_t>& elem) {
  GraphProto b;
  b.set_name("scan_body");
  tensor_type(b.add_input(), "sum_in", kFloat, elem);
  tensor_type(b.add_input(), "next", kFloat, elem);
  add_node(&b, "Add", {"sum_in", "next"}, {"sum_out"});
  add_node(&b, "Identity", {"sum_out"}, {"scan_out"});
  tensor_type(b.add_output(), "sum_out", kFloat, elem);
  tensor_type(b.add_output(), "scan_out", kFloat, elem);
  return b;
}

TEST(ReferenceControlFlowTest, Scan9AxesAndDirections) {
  testing::ModelBuilder m(16);
  m.input("init", kFloat, {2}).input("x", kFloat, {2, 3});
  GraphProto* g = m.proto().mutable_graph();
  NodeProto* n = add_node(g, "Scan", {"init", "x"}, {"sum", "scans"});
  graph_attr(n, "body", scan_body({2}));
  int_attr(n, "num_scan_inputs", 1);
  ints_attr(n, "scan_input_axes", {1});        // scan over columns
  ints_attr(n, "scan_input_directions", {1});  // last column first
  ints_attr(n, "scan_output_axes", {-1});      // stack along the last axis
  m.output("sum", kFloat, {2}).output("scans", kFloat, {2, 3});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  // Columns: c0=(1,4) c1=(2,5) c2=(3,6); visited c2, c1, c0.
  auto out = s->run_values({{"init", float_tensor({2}, {0, 0})}, {"x", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0].tensor()), (std::vector<float>{6, 15}));
  EXPECT_EQ((*out)[1].tensor().dims(), (Dims{2, 3}));
  EXPECT_EQ(values_of((*out)[1].tensor()), (std::vector<float>{3, 5, 6, 6, 11, 15}));
}

TEST(ReferenceControlFlowTest, Scan8BatchWithSequenceLengths) {
  testing::ModelBuilder m(8);
  m.input("lens", kInt64, {2}).input("init", kFloat, {2, 2}).input("x", kFloat, {2, 3, 2});
  GraphProto* g = m.proto().mutable_graph();
  NodeProto* n = add_node(g, "Scan", {"lens", "init", "x"}, {"sum", "scans"});
  graph_attr(n, "body", scan_body({2}));
  int_attr(n, "num_scan_inputs", 1);
  m.output("sum", kFloat, {2, 2}).output("scans", kFloat, {2, 3, 2});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto out = s->run_values({{"lens", int64_tensor({2}, {3, 1})},
                            {"init", float_tensor({2, 2}, {0, 0, 100, 100})},
                            {"x", float_tensor({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0].tensor()), (std::vector<float>{9, 12, 107, 108}));
  EXPECT_EQ((*out)[1].tensor().dims(), (Dims{2, 3, 2}));
  EXPECT_EQ(values_of((*out)[1].tensor()), (std::vector<float>{1, 2, 4, 6, 9, 12, 107, 108, 0, 0, 0, 0}));
}

// --- SequenceMap ------------------------------------------------------------

TEST(ReferenceControlFlowTest, SequenceMapWithBroadcastTensor) {
  testing::ModelBuilder m(17);
  GraphProto* g = m.proto().mutable_graph();
  sequence_type(g->add_input(), "seq", kFloat);
  m.input("bias", kFloat, {1});
  GraphProto b;
  b.set_name("map_body");
  tensor_type(b.add_input(), "elem", kFloat, {-1});
  tensor_type(b.add_input(), "bias_in", kFloat, {1});
  add_node(&b, "Add", {"elem", "bias_in"}, {"sum"});
  add_node(&b, "Shape", {"elem"}, {"shape"});
  tensor_type(b.add_output(), "sum", kFloat, {-1});
  tensor_type(b.add_output(), "shape", kInt64, {1});
  graph_attr(add_node(g, "SequenceMap", {"seq", "bias"}, {"sums", "shapes"}), "body", b);
  sequence_type(g->add_output(), "sums", kFloat);
  sequence_type(g->add_output(), "shapes", kInt64);
  auto s = make_session(m);
  ASSERT_TRUE(s);
  Value seq = Value::sequence(DType::kFloat, {float_tensor({2}, {1, 2}), float_tensor({3}, {3, 4, 5})});
  auto out = s->run_values({{"seq", seq}, {"bias", float_tensor({1}, {10})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].elements().size(), 2u);
  EXPECT_EQ(values_of((*out)[0].elements()[1]), (std::vector<float>{13, 14, 15}));
  ASSERT_EQ((*out)[1].elements().size(), 2u);
  EXPECT_EQ((*out)[1].sequence_dtype(), DType::kInt64);
  EXPECT_EQ(int64_values((*out)[1].elements()[0]), std::vector<int64_t>{2});
}

}  // namespace
}  // namespace loom
