// The op registry (opreg/op_registry.h): Loom's schemas for ops and
// versions ONNX 1.12 lacks are found at the opsets they serve and not
// before, shadow nothing older, are checked in full at load, and infer
// output types and shapes both in the inference-server program and in a
// forked server (the custom-op path).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "opreg/onnx_inference/isolated_inference.h"
#include "onnx/model_loader.h"
#include "opreg/op_registry.h"

namespace loom::opreg {
namespace {

using ::onnx::TensorProto;

TEST(OpRegistryTest, LoomSchemasServeFromTheirSinceVersion) {
  EXPECT_EQ(find_schema("Attention", 22, ""), nullptr);
  const ::onnx::OpSchema* a23 = find_schema("Attention", 23, "");
  const ::onnx::OpSchema* a28 = find_schema("Attention", 28, "ai.onnx");
  ASSERT_NE(a23, nullptr);
  ASSERT_NE(a28, nullptr);
  EXPECT_EQ(a23->SinceVersion(), 23);
  EXPECT_EQ(a28->SinceVersion(), 24);
  EXPECT_TRUE(is_loom_schema(a23));
  // ONNX's own schemas stay where Loom has no newer version.
  const ::onnx::OpSchema* relu = find_schema("Relu", 23, "");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->SinceVersion(), 14);
  EXPECT_FALSE(is_loom_schema(relu));
  EXPECT_EQ(find_schema("Mish", 17, ""), nullptr);
  EXPECT_EQ(find_schema("Mish", 21, "")->SinceVersion(), 18);
  EXPECT_EQ(find_schema("NoSuchOp", 28, ""), nullptr);
  EXPECT_EQ(op_registry().GetSchema("GroupNormalization", 20, "")->SinceVersion(), 18);
}

// Attention (3-D, GQA, with a cache), Col2Im and CenterCropPad with their
// shape inputs as initializers; no declared output shapes.
::onnx::ModelProto recent_ops_model() {
  testing::ModelBuilder m(24);
  m.input("q", TensorProto::FLOAT, {2, 5, 32});
  m.input("k", TensorProto::FLOAT, {2, 5, 16});
  m.input("v", TensorProto::FLOAT, {2, 5, 24});
  m.input("pk", TensorProto::FLOAT, {2, 2, 3, 8});
  m.input("pv", TensorProto::FLOAT, {2, 2, 3, 12});
  auto& att = m.node("Attention", {"q", "k", "v", "", "pk", "pv"}, {"y", "present_k", "present_v", "qk"}, "attention");
  testing::add_int_attr(att, "q_num_heads", 4);
  testing::add_int_attr(att, "kv_num_heads", 2);
  m.input("cols", TensorProto::FLOAT, {1, 6, 12});
  m.int64_initializer("image", {2}, {4, 5});
  m.int64_initializer("block", {2}, {2, 3});
  m.node("Col2Im", {"cols", "image", "block"}, {"img"}, "col2im");
  m.input("x", TensorProto::FLOAT, {20, 8, 3});
  m.int64_initializer("crop", {2}, {10, 9});
  auto& crop = m.node("CenterCropPad", {"x", "crop"}, {"cropped"}, "crop");
  testing::add_ints_attr(crop, "axes", {0, 1});
  for (const char* out : {"y", "present_k", "present_v", "qk", "img", "cropped"}) m.output(out, TensorProto::FLOAT, {});
  ::onnx::ModelProto model = m.proto();
  for (auto& o : *model.mutable_graph()->mutable_output()) o.clear_type();
  return model;
}

std::vector<int64_t> output_dims(const ::onnx::ModelProto& model, const std::string& name) {
  for (const auto& o : model.graph().output())
    if (o.name() == name) {
      std::vector<int64_t> dims;
      for (const auto& d : o.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      return dims;
    }
  return {};
}

void expect_recent_ops_inferred(const ::onnx::ModelProto& model) {
  EXPECT_EQ(output_dims(model, "y"), (std::vector<int64_t>{2, 5, 48}));  // 4 heads x v head size 24 / 2
  EXPECT_EQ(output_dims(model, "present_k"), (std::vector<int64_t>{2, 2, 8, 8}));
  EXPECT_EQ(output_dims(model, "present_v"), (std::vector<int64_t>{2, 2, 8, 12}));
  EXPECT_EQ(output_dims(model, "qk"), (std::vector<int64_t>{2, 4, 5, 8}));
  EXPECT_EQ(output_dims(model, "img"), (std::vector<int64_t>{1, 1, 4, 5}));
  EXPECT_EQ(output_dims(model, "cropped"), (std::vector<int64_t>{10, 9, 3}));
}

TEST(OpRegistryTest, TheInferenceServerProgramInfersLoomSchemas) {
  ::onnx::ModelProto model = recent_ops_model();
  const onnxio::InferenceResult r = onnxio::infer_with_onnx_schemas(model);
  ASSERT_EQ(r.outcome, onnxio::InferenceOutcome::kDone) << r.detail;
  expect_recent_ops_inferred(model);
}

TEST(OpRegistryTest, AForkedServerInfersLoomSchemas) {
  onnxio::InferenceServer server(&op_registry());
  ASSERT_EQ(server.launch(), onnxio::ServerLaunch::kFork);
  ::onnx::ModelProto model = recent_ops_model();
  const onnxio::InferenceResult r = server.infer(model);
  ASSERT_EQ(r.outcome, onnxio::InferenceOutcome::kDone) << r.detail;
  expect_recent_ops_inferred(model);
}

TEST(OpRegistryTest, LoaderChecksNodesAgainstLoomSchemas) {
  auto load = [](int64_t opset, const std::function<void(::onnx::NodeProto&)>& edit) {
    testing::ModelBuilder m(opset);
    m.input("x", TensorProto::FLOAT, {2, 3});
    auto& n = m.node("Gelu", {"x"}, {"y"}, "gelu");
    if (edit) edit(n);
    m.output("y", TensorProto::FLOAT, {2, 3});
    return onnxio::load_model_bytes(m.bytes(), ".", "model");
  };
  EXPECT_TRUE(load(20, nullptr).has_value());
  auto early = load(19, nullptr);
  ASSERT_FALSE(early.has_value());
  EXPECT_NE(early.status().message().find("unknown op 'Gelu'"), std::string::npos) << early.status().message();
  auto bad_attr = load(20, [](::onnx::NodeProto& n) { testing::add_int_attr(n, "approximate", 1); });
  ASSERT_FALSE(bad_attr.has_value());
  EXPECT_NE(bad_attr.status().message().find("does not match its op's schema"), std::string::npos)
      << bad_attr.status().message();
  auto extra_input = load(20, [](::onnx::NodeProto& n) { n.add_input("x"); });
  ASSERT_FALSE(extra_input.has_value());
  EXPECT_NE(extra_input.status().message().find("gelu"), std::string::npos) << extra_input.status().message();
}

}  // namespace
}  // namespace loom::opreg
