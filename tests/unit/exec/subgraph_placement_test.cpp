// Nodes inside subgraphs are partitioned with the session's EPs like the main
// graph: here a Relu inside an If branch runs on the test_device EP (whose
// kernels only accept its own memory), with copies in and out of the body.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

std::string if_model() {
  testing::ModelBuilder m(13);
  m.input("cond", ::onnx::TensorProto::BOOL, {});
  m.input("x", ::onnx::TensorProto::FLOAT, {3});
  auto& node = m.node("If", {"cond"}, {"y"}, "branch");
  auto branch = [&](const std::string& name, const std::string& op) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(name);
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name + "_" + op);
    n->add_input("x");  // captured from the outer graph
    n->add_output(name + "_out");
    auto* out = g->add_output();
    out->set_name(name + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  };
  branch("then_branch", "Relu");
  branch("else_branch", "Neg");
  m.output("y", ::onnx::TensorProto::FLOAT, {3});
  return m.bytes();
}

TEST(SubgraphPlacementTest, EpRunsNodesInsideIfBranches) {
  Config config;
  config.providers = {"test_device", "reference"};
  auto env = testing::make_env(config, "device");
  auto s = Session::create_from_bytes(env, if_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto copies = testing::plugin_symbol<uint64_t (*)()>(testing::test_plugin_dir("device") + "/libloom_test_device_ep.so",
                                                        "loom_test_device_copies");
  ASSERT_NE(copies, nullptr);
  auto cond = [](bool v) { return Tensor::from_vector(DType::kBool, {}, std::vector<uint8_t>{v}); };

  const uint64_t before = copies();
  auto then_out = (*s)->run({{"cond", cond(true)}, {"x", float_tensor({3}, {-1, 2, -3})}});
  ASSERT_TRUE(then_out.has_value()) << then_out.status().message();
  EXPECT_EQ(values_of((*then_out)[0]), (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(copies() - before, 2u);  // x into device memory, the branch output back

  const uint64_t mid = copies();
  auto else_out = (*s)->run({{"cond", cond(false)}, {"x", float_tensor({3}, {-1, 2, -3})}});
  ASSERT_TRUE(else_out.has_value()) << else_out.status().message();
  EXPECT_EQ(values_of((*else_out)[0]), (std::vector<float>{1, -2, 3}));
  EXPECT_EQ(copies(), mid);  // Neg runs on the reference EP, in host memory
}

}  // namespace
}  // namespace loom
