// check_plugin_on_model (`loom plugins --check PATH.so --model M.onnx`): a
// plugin's claimed nodes run on their own against the reference EP, with
// test_contract_ep breaking its Relu on demand: a kept contract passes,
// wrong values and a wrong shape fail naming the node and what differs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "loom/plugin_check.h"

namespace loom {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

class PluginModelCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // x [2, 3] -> Relu -> r -> Neg -> y: test_contract claims the Relu,
    // test_peer (same library) the Neg.
    testing::ModelBuilder m;
    m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
    m.node("Relu", {"x"}, {"r"}, "relu");
    m.node("Neg", {"r"}, {"y"}, "neg");
    m.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
    model_ = (fs::temp_directory_path() / ("loom_plugin_model_check_" + std::to_string(::getpid()) + ".onnx")).string();
    std::ofstream(model_, std::ios::binary) << m.bytes();
  }
  void TearDown() override { std::remove(model_.c_str()); }

  PluginCheckReport check(const std::string& mode) const {
    ModelCheckOptions o;
    o.model_path = model_;
    o.inputs["x"] = testing::float_tensor({2, 3}, {-1, 2, -3, 4, -5, 6});
    o.config.provider_options["test_contract"]["break"] = mode;
    return check_plugin_on_model(testing::test_plugin_dir("contract") + "/libloom_test_contract_ep.so", o);
  }
  static std::string describe(const PluginCheckReport& r) {
    std::string s;
    for (const auto& i : r.items) s += std::string(check_level_name(i.level)) + " " + i.what + ": " + i.detail + "\n";
    return s;
  }

  std::string model_;
};

TEST_F(PluginModelCheckTest, KeptContractPassesEveryNodeAndTheWholeModel) {
  const PluginCheckReport r = check("none");
  EXPECT_TRUE(r.ok()) << describe(r);
  const std::string s = describe(r);
  EXPECT_TRUE(contains(s, "ok 'test_contract' nodes: 1 of 2 node(s) placed on it; 1 match")) << s;
  EXPECT_TRUE(contains(s, "ok 'test_peer' nodes: 1 of 2 node(s) placed on it; 1 match")) << s;
  EXPECT_TRUE(contains(s, "ok 'test_contract' whole model: 1 output(s) match")) << s;
}

TEST_F(PluginModelCheckTest, WrongValuesFailNamingTheNodeAndTheFirstDifference) {
  const PluginCheckReport r = check("values");
  EXPECT_FALSE(r.ok()) << describe(r);
  const std::string s = describe(r);
  // Relu(-5) is 0; the broken kernel passes -5 through (the worst element is named).
  EXPECT_TRUE(contains(s, "FAIL 'test_contract' node 'relu' (Relu): output 'r' differs at element 4: -5 where the "
                          "reference has 0"))
      << s;
  EXPECT_TRUE(contains(s, "FAIL 'test_contract' whole model: output 'y' differs")) << s;
  EXPECT_TRUE(contains(s, "ok 'test_peer' whole model")) << "the library's other provider is unaffected: " << s;
}

TEST_F(PluginModelCheckTest, WrongShapeFailsNamingBothShapes) {
  const PluginCheckReport r = check("shape");
  EXPECT_FALSE(r.ok()) << describe(r);
  const std::string s = describe(r);
  EXPECT_TRUE(contains(s, "FAIL 'test_contract' node 'relu' (Relu)")) << s;
  EXPECT_TRUE(contains(s, "[3,2]")) << s;
  EXPECT_TRUE(contains(s, "[2,3]")) << s;
}

TEST_F(PluginModelCheckTest, AMissingPluginOrModelFails) {
  ModelCheckOptions o;
  o.model_path = model_;
  EXPECT_FALSE(check_plugin_on_model("/no/such/plugin.so", o).ok());
  o.model_path = "/no/such/model.onnx";
  o.inputs["x"] = testing::float_tensor({2, 3}, {-1, 2, -3, 4, -5, 6});
  const PluginCheckReport r =
      check_plugin_on_model(testing::test_plugin_dir("contract") + "/libloom_test_contract_ep.so", o);
  EXPECT_FALSE(r.ok()) << describe(r);
  EXPECT_TRUE(contains(describe(r), "model.onnx")) << describe(r);
}

}  // namespace
}  // namespace loom
