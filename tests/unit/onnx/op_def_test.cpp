// Loom's own op definitions (opreg/op_def.h): every schema the registry
// serves has one, nodes are bound to theirs at load, and the loader's one
// node check (node_check.h) reads them: in full at the opsets the schemas
// were written for, leniently past the ONNX library's last opset.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "common/model_builder.h"
#include "onnx/model_loader.h"
#include "onnx/node_check.h"
#include "onnx/op_schemas.h"
#include "opreg/op_def.h"

namespace loom::opreg {
namespace {

using ::onnx::TensorProto;

TEST(OpDefTest, EveryVersionOfEveryOpIsServedFromItsSinceVersion) {
  size_t served = 0, loom = 0;
  for (const OpDef* d : all_op_defs()) {
    ASSERT_NE(d, nullptr);
    EXPECT_FALSE(d->name.empty());
    EXPECT_LE(d->min_inputs, d->max_inputs) << d->qualified_name();
    EXPECT_LE(d->min_outputs, d->max_outputs) << d->qualified_name();
    for (const FormalDef& f : d->inputs)
      EXPECT_TRUE(d->constraint(f.type_str) != nullptr || f.type_str.find('(') != std::string::npos)
          << d->qualified_name() << " input " << f.name << ": " << f.type_str;
    const OpDef* found = find_op_def(d->name, d->since_version, d->domain);
    ASSERT_NE(found, nullptr) << d->qualified_name() << "-" << d->since_version;
    // Loom's table may shadow a library version from the same opset on.
    if (found == d) ++served;
    if (d->source == OpSource::kLoom) ++loom;
  }
  EXPECT_GT(served, 400u);  // ONNX 1.12: 444 versions of its ops; Loom: 40
  EXPECT_GE(loom, 40u);
  // The same schema gives the same definition object every time.
  EXPECT_EQ(find_op_def("Relu", 14, ""), find_op_def("Relu", 20, "ai.onnx"));
}

TEST(OpDefTest, DefinitionsSayWhatTheSchemaSays) {
  const OpDef* conv = find_op_def("Conv", 11, "");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->source, OpSource::kOnnx);
  EXPECT_EQ(conv->qualified_name(), "ai.onnx.Conv");
  ASSERT_EQ(conv->inputs.size(), 3u);
  EXPECT_EQ(conv->inputs[2].option, FormalOption::kOptional);
  EXPECT_EQ(conv->input_formal(3), nullptr);
  ASSERT_NE(conv->attribute("strides"), nullptr);
  EXPECT_EQ(conv->attribute("strides")->type, ir::AttrType::kInts);
  EXPECT_FALSE(conv->any_attributes);
  const TypeConstraintDef* t = conv->constraint("T");
  ASSERT_NE(t, nullptr);
  EXPECT_NE(std::find(t->allowed.begin(), t->allowed.end(), "tensor(float)"), t->allowed.end());

  const OpDef* concat = find_op_def("Concat", 13, "");
  ASSERT_NE(concat, nullptr);
  ASSERT_NE(concat->input_formal(7), nullptr);  // a variadic formal serves every later position
  EXPECT_EQ(concat->input_formal(7)->option, FormalOption::kVariadic);

  const OpDef* attention = find_op_def("Attention", 24, "");
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->source, OpSource::kLoom);
  EXPECT_EQ(find_op_def("Attention", 22, ""), nullptr);
  EXPECT_EQ(last_onnx_library_opset(""), 17);
  EXPECT_EQ(last_onnx_library_opset("no.such.domain"), 0);

  // ONNX's Verify accepts any attribute on a few schemas; Loom reads that.
  EXPECT_TRUE(find_op_def("LayerNormalization", 17, "")->any_attributes);
  EXPECT_TRUE(find_op_def("Upsample", 10, "")->deprecated);
  EXPECT_FALSE(find_op_def("Upsample", 10, "")->any_attributes);

  EXPECT_EQ(dtype_from_type_string(tensor_type_string(DType::kFloat8E4M3FN)), DType::kFloat8E4M3FN);
  EXPECT_EQ(tensor_type_string(DType::kInt2), "tensor(int2)");
  EXPECT_EQ(dtype_from_type_string("seq(tensor(float))"), DType::kUndefined);
}

TEST(OpDefTest, TheLoaderBindsEveryNodeIncludingSubgraphs) {
  testing::ModelBuilder m(17);
  m.input("x", TensorProto::FLOAT, {2});
  m.input("c", TensorProto::BOOL, {});
  ::onnx::GraphProto then_g, else_g;
  for (auto* g : {&then_g, &else_g}) {
    auto* n = g->add_node();
    n->set_op_type(g == &then_g ? "Relu" : "Neg");
    n->add_input("x");
    n->add_output(g == &then_g ? "t" : "e");
    auto* out = g->add_output();
    out->set_name(n->output(0));
    out->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  }
  auto& branch = m.node("If", {"c"}, {"y"}, "branch");
  for (const auto& [name, g] : {std::pair{"then_branch", &then_g}, std::pair{"else_branch", &else_g}}) {
    auto* a = branch.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    *a->mutable_g() = *g;
  }
  m.output("y", TensorProto::FLOAT, {2});
  auto loaded = onnxio::load_model_bytes(m.bytes(), ".", "model");
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  const ir::Node& node = *loaded->graph->nodes().front();
  ASSERT_NE(node.op_def, nullptr);
  EXPECT_EQ(node.op_def->name, "If");
  std::set<std::string> bound;
  for (const ir::Attribute& a : node.attributes)
    for (const auto& n : a.graph->nodes()) {
      ASSERT_NE(n->op_def, nullptr) << n->op_type;
      bound.insert(n->op_def->name);
    }
  EXPECT_EQ(bound, (std::set<std::string>{"Relu", "Neg"}));
  // A copy given another op is not read through its stale binding.
  ir::Node copy = node;
  copy.op_type = "Identity";
  const OpDef* d = onnxio::op_def_of(*loaded->graph, copy);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "Identity");
}

// Loads a one-node model of `op` at `opset` after `edit`; the error or "".
std::string load_error(const std::string& op, int64_t opset, const std::function<void(::onnx::NodeProto&)>& edit) {
  testing::ModelBuilder m(opset);
  m.input("x", TensorProto::FLOAT, {2, 3});
  auto& n = m.node(op, {"x"}, {"y"}, "node");
  edit(n);
  m.output("y", TensorProto::FLOAT, {});
  auto loaded = onnxio::load_model_bytes(m.bytes(), ".", "model");
  return loaded.has_value() ? std::string() : loaded.status().message();
}

TEST(OpDefTest, NodesAreCheckedInFullAtTheLibrarysOpsets) {
  EXPECT_EQ(load_error("Relu", 14, [](auto&) {}), "");
  EXPECT_NE(load_error("Relu", 14, [](auto& n) { testing::add_int_attr(n, "bogus", 1); })
                .find("does not match its op's schema at opset 14: attribute 'bogus' is not in the schema"),
            std::string::npos);
  EXPECT_NE(load_error("LeakyRelu", 16, [](auto& n) { testing::add_int_attr(n, "alpha", 1); })
                .find("attribute 'alpha' is int, the schema declares float"),
            std::string::npos);
  EXPECT_NE(load_error("Relu", 14, [](auto& n) { n.add_input("x"); }).find("has 2 input(s), the schema takes 1"),
            std::string::npos);
  // An omitted single input: Clip's min is optional, Gemm's B is not.
  EXPECT_EQ(load_error("Clip", 13, [](auto& n) { n.add_input(""); n.add_input("x"); }), "");
  EXPECT_NE(load_error("Gemm", 13, [](auto& n) { n.add_input(""); n.add_input("x"); })
                .find("input 1 (B) is omitted but not optional"),
            std::string::npos);
  // A variadic formal given fewer values than it takes at least.
  EXPECT_NE(load_error("Concat", 13, [](auto& n) {
              n.clear_input();
              testing::add_int_attr(n, "axis", 0);
            }).find("the schema takes at least 1"),
            std::string::npos);
}

TEST(OpDefTest, DeprecatedVersionsAreRefusedNamingTheVersion) {
  EXPECT_NE(load_error("Upsample", 10, [](auto& n) { n.add_input("x"); }).find("deprecated since version 10"),
            std::string::npos);
}

TEST(OpDefTest, PastTheLibrarysOpsetsOnlyWhatLaterVersionsKeepIsChecked) {
  // Relu at opset 23 is served by Relu-14: an attribute or input a later
  // version might add is not refused, a missing required input is.
  EXPECT_EQ(load_error("Relu", 23, [](auto& n) { n.add_input("x"); }), "");
  EXPECT_EQ(load_error("Relu", 23, [](auto& n) { testing::add_int_attr(n, "new_in_a_later_version", 1); }), "");
  EXPECT_NE(load_error("Gemm", 23, [](auto&) {}).find("has 1 input(s), the schema takes at least 2"),
            std::string::npos);
  EXPECT_NE(load_error("LeakyRelu", 23, [](auto& n) { testing::add_int_attr(n, "alpha", 1); })
                .find("attribute 'alpha' is int"),
            std::string::npos);
  // Loom's own schemas are written for the opsets they serve: checked in full.
  EXPECT_NE(load_error("Gelu", 23, [](auto& n) { testing::add_int_attr(n, "bogus", 1); })
                .find("attribute 'bogus' is not in the schema"),
            std::string::npos);
}

TEST(OpDefTest, OnnxRuntimeContribOpsAreDefinedAndCheckedForWhatEveryVersionKeeps) {
  for (const char* op : {"Attention", "BiasGelu", "EmbedLayerNormalization", "FastGelu", "FusedConv", "FusedGemm",
                         "FusedMatMul", "Gelu", "MatMulIntegerToFloat", "QuickGelu", "SkipLayerNormalization",
                         "SkipSimplifiedLayerNormalization"}) {
    const OpDef* d = find_op_def(op, 1, "com.microsoft");
    ASSERT_NE(d, nullptr) << op;
    EXPECT_EQ(d->source, OpSource::kContrib) << op;
    EXPECT_TRUE(d->any_attributes) << op;
  }
  auto contrib_error = [](const std::function<void(::onnx::NodeProto&)>& edit) {
    testing::ModelBuilder m(17);
    m.proto().add_opset_import()->set_domain("com.microsoft");
    m.proto().mutable_opset_import()->rbegin()->set_version(1);
    m.input("x", TensorProto::FLOAT, {1, 4, 8});
    m.float_initializer("w", {8, 24}, std::vector<float>(192, 0.1f));
    auto& n = m.node("Attention", {"x", "w"}, {"y"}, "attention");
    n.set_domain("com.microsoft");
    edit(n);
    m.output("y", TensorProto::FLOAT, {});
    auto loaded = onnxio::load_model_bytes(m.bytes(), ".", "model");
    return loaded.has_value() ? std::string() : loaded.status().message();
  };
  EXPECT_EQ(contrib_error([](auto& n) { testing::add_int_attr(n, "num_heads", 2); }), "");
  // An attribute of a later ONNX Runtime is accepted; a missing required one is not.
  EXPECT_EQ(contrib_error([](auto& n) {
              testing::add_int_attr(n, "num_heads", 2);
              testing::add_int_attr(n, "do_rotary", 0);
            }),
            "");
  EXPECT_NE(contrib_error([](auto&) {}).find("required attribute 'num_heads' is missing"), std::string::npos);
  EXPECT_NE(contrib_error([](auto& n) { testing::add_float_attr(n, "num_heads", 2.f); }).find("num_heads"),
            std::string::npos);
}

TEST(OpDefTest, CheckDepthFollowsTheSource) {
  const OpDef* relu = find_op_def("Relu", 14, "");
  EXPECT_EQ(onnxio::check_depth(*relu, 14), onnxio::CheckDepth::kFull);
  EXPECT_EQ(onnxio::check_depth(*relu, 18), onnxio::CheckDepth::kRequired);
  EXPECT_EQ(onnxio::check_depth(*find_op_def("Gelu", 20, ""), 28), onnxio::CheckDepth::kFull);
  OpDef plugin = *relu;
  plugin.source = OpSource::kPlugin;
  EXPECT_EQ(onnxio::check_depth(plugin, 99, /*declared=*/false), onnxio::CheckDepth::kArity);
  EXPECT_EQ(onnxio::check_depth(plugin, 99, /*declared=*/true), onnxio::CheckDepth::kFull);
}

}  // namespace
}  // namespace loom::opreg
