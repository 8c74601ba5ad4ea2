// ai.onnx.preview FlexAttention on the reference EP: score_mod and prob_mod
// graphs run on whole tensors, and inconsistent inputs are refused naming
// the op and the node.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::float_tensor;
using testing::OneNodeModel;
using testing::values_of;

// A graph attribute `name` computing `out = in <op> c` for a float scalar c.
void add_mod(::onnx::NodeProto& node, const std::string& name, const std::string& op, float c) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto* g = a->mutable_g();
  g->set_name(name);
  auto* in = g->add_input();
  in->set_name(name + "_in");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  auto* out = g->add_output();
  out->set_name(name + "_out");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  auto* init = g->add_initializer();
  init->set_name(name + "_c");
  init->set_data_type(TensorProto::FLOAT);
  init->add_float_data(c);
  auto* n = g->add_node();
  n->set_op_type(op);
  n->add_input(name + "_in");
  n->add_input(name + "_c");
  n->add_output(name + "_out");
}

// Q filled with 0.5, K with 0.25 (equal scores everywhere), V with 0, 1, ...
struct Flex {
  OneNodeModel g;
  explicit Flex(Dims q, Dims kv)
      : g("FlexAttention", 17,
          {{"q", float_tensor(q, std::vector<float>(static_cast<size_t>(q[0] * q[1] * q[2] * q[3]), 0.5f))},
           {"k", float_tensor(kv, std::vector<float>(static_cast<size_t>(kv[0] * kv[1] * kv[2] * kv[3]), 0.25f))},
           {"v", float_tensor(kv, [&] {
              std::vector<float> v(static_cast<size_t>(kv[0] * kv[1] * kv[2] * kv[3]));
              for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
              return v;
            }())}},
          {{"y", TensorProto::FLOAT}}) {
    g.node->set_domain("ai.onnx.preview");
    g.m.import_domain("ai.onnx.preview", 1);
  }
};

TEST(FlexAttentionTest, ModGraphsRunOnScoresAndProbabilities) {
  // Equal scores: uniform weights, Y = the mean of V's rows; a score_mod
  // adding a constant changes nothing, a prob_mod scaling by 2 doubles Y.
  Flex plain({1, 1, 1, 2}, {1, 1, 2, 2});
  auto base = plain.g.run();
  ASSERT_TRUE(base.has_value()) << base.status().message();
  EXPECT_EQ(values_of((*base)[0]), (std::vector<float>{1, 2}));  // mean of [0, 1] and [2, 3]
  Flex shifted({1, 1, 1, 2}, {1, 1, 2, 2});
  add_mod(*shifted.g.node, "score_mod", "Add", 5.0f);
  add_mod(*shifted.g.node, "prob_mod", "Mul", 2.0f);
  auto out = shifted.g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{2, 4}));
}

TEST(FlexAttentionTest, NearMissesAreRefused) {
  Flex heads({1, 3, 1, 2}, {1, 2, 2, 2});
  auto out = heads.g.run();
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("FlexAttention"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("multiple of kv heads"), std::string::npos) << out.status().message();
  Flex reshaping({1, 1, 1, 2}, {1, 1, 2, 2});
  auto* a = reshaping.g.node->add_attribute();
  a->set_name("score_mod");
  a->set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto* g = a->mutable_g();
  g->set_name("score_mod");
  auto* in = g->add_input();
  in->set_name("s");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  auto* o = g->add_output();
  o->set_name("r");
  o->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  auto* n = g->add_node();
  n->set_op_type("ReduceSum");
  n->add_input("s");
  n->add_output("r");
  auto wrong = reshaping.g.run();
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.status().message().find("score_mod returned shape"), std::string::npos) << wrong.status().message();
}

}  // namespace
}  // namespace loom
