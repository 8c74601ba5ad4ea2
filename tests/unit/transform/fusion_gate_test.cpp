// Extended-level fusions ask the EP that would run the nodes they replace
// whether it runs the fused op: a fusion never moves work to a provider
// further down the priority list.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

// y = MatMul(x, W) + b: matmul_add_fusion makes it one Gemm.
std::string matmul_add_model() {
  testing::ModelBuilder m(14);
  m.input("x", kFloat, {3, 4});
  m.float_initializer("w", {4, 5}, testing::wave(20));
  m.float_initializer("b", {5}, testing::wave(5, 0.5f));
  m.node("MatMul", {"x", "w"}, {"h"});
  m.node("Add", {"h", "b"}, {"y"});
  m.output("y", kFloat, {3, 5});
  return m.bytes();
}

std::unique_ptr<Session> session_on(std::vector<std::string> providers) {
  Config c;
  c.providers = std::move(providers);
  c.optimization_level = OptimizationLevel::kExtended;
  auto s = Session::create_from_bytes(testing::make_env(c, "device"), matmul_add_model());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

TEST(FusionGateTest, FusesWhenTheNodesProviderRunsTheFusedOp) {
  auto s = session_on({"reference"});
  ASSERT_TRUE(s);
  EXPECT_EQ(testing::op_counts(*s), (std::map<std::string, int>{{"Gemm", 1}}));
}

TEST(FusionGateTest, KeepsTheNodesWhenTheirProviderDoesNotRunIt) {
  // test_fused claims the Add (it compiles Add/Relu only): turning the pair
  // into a Gemm would hand the Add to the reference EP.
  auto s = session_on({"test_fused", "reference"});
  ASSERT_TRUE(s);
  EXPECT_EQ(testing::op_counts(*s), (std::map<std::string, int>{{"Add", 1}, {"MatMul", 1}}));
  // (Not run: test_fused's Add takes equal shapes only; placement is the point.)
  for (const auto& n : s->placement().nodes)
    EXPECT_EQ(n.provider, n.op_type == "Add" ? "test_fused" : "reference") << n.node_name;
}

TEST(FusionGateTest, GemmWithAnActivationCpuOnednnCannotFuseStaysApart) {
  // Gemm -> Softsign: ONNX Runtime fuses it into FusedGemm, which cpu_onednn
  // cannot build; with cpu_onednn first the Gemm keeps running there.
  if (!testing::has_provider("cpu_onednn")) GTEST_SKIP() << "built without cpu_onednn (LOOM_WITH_ONEDNN=OFF)";
  testing::ModelBuilder m(14);
  m.input("a", kFloat, {3, 4});
  m.float_initializer("w", {4, 5}, testing::wave(20));
  m.node("Gemm", {"a", "w"}, {"g"});
  m.node("Softsign", {"g"}, {"y"});
  m.output("y", kFloat, {3, 5});
  Config c;
  c.providers = {"cpu_onednn", "reference"};
  c.optimization_level = OptimizationLevel::kExtended;
  auto s = Session::create_from_bytes(testing::make_env(c), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ(testing::op_counts(**s), (std::map<std::string, int>{{"Gemm", 1}, {"Softsign", 1}}));
  for (const auto& n : (*s)->placement().nodes)
    if (n.op_type == "Gemm") EXPECT_EQ(n.provider, "cpu_onednn");
}

}  // namespace
}  // namespace loom
