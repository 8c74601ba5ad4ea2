// Channels-last on the cuda EP: which element types prefer_nhwc takes, the
// layout phase's placement against a virtual device (no GPU needed), and on
// a GPU the loom.nhwc Conv / FusedConv / pools (cuDNN's NHWC descriptors,
// the epilogue pass over NHWC, the channels-last pool kernels) against the
// reference EP's, and a whole chain through the layout phase against the
// reference EP in NCHW.
#include <gtest/gtest.h>

#include "ep_options.h"
#include "kernels/conv_geometry.h"

#include <functional>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;
using Dims = std::vector<int64_t>;
using Attrs = std::function<void(::onnx::NodeProto&)>;

std::shared_ptr<Environment> env_with(const std::vector<std::string>& providers, OptimizationLevel level,
                                      std::map<std::string, std::map<std::string, std::string>> options,
                                      Precision precision = Precision::kFloat32) {
  Config c;
  c.providers = providers;
  c.fallback = providers.size() > 1 ? FallbackPolicy::kAllow : FallbackPolicy::kDeny;
  c.optimization_level = level;
  c.provider_options = std::move(options);
  c.precision = precision;
  return testing::make_env(c);
}

// A stem, a residual block (Conv + Add + Relu: FusedConv with Z), max and
// average pooling, a depthwise and a pointwise convolution, a global pool
// and a classifier.
std::string chain_model() {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {-1, 3, 32, 32});
  uint32_t seed = 11;
  auto weight = [&](const std::string& name, const Dims& dims) {
    const Tensor t = random_tensor(DType::kFloat, dims, seed++, -0.3f, 0.3f);
    m.float_initializer(name, dims, std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count()));
  };
  weight("w1", {16, 3, 3, 3});
  weight("b1", {16});
  weight("w2", {16, 16, 3, 3});
  weight("b2", {16});
  weight("w3", {16, 1, 3, 3});
  weight("w4", {32, 16, 1, 1});
  weight("b4", {32});
  weight("fc", {32, 10});
  testing::add_ints_attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"});
  auto& pool = m.node("MaxPool", {"r1"}, {"p1"});
  testing::add_ints_attr(pool, "kernel_shape", {3, 3});
  testing::add_ints_attr(pool, "strides", {2, 2});
  testing::add_ints_attr(pool, "pads", {1, 1, 1, 1});
  testing::add_ints_attr(m.node("Conv", {"p1", "w2", "b2"}, {"c2"}), "pads", {1, 1, 1, 1});
  m.node("Add", {"c2", "p1"}, {"a2"});
  m.node("Relu", {"a2"}, {"r2"});
  auto& dw = m.node("Conv", {"r2", "w3"}, {"c3"});
  testing::add_ints_attr(dw, "pads", {1, 1, 1, 1});
  testing::add_ints_attr(dw, "strides", {2, 2});
  testing::add_int_attr(dw, "group", 16);
  m.float_initializer("lo", {}, {0.f});
  m.float_initializer("hi", {}, {6.f});
  m.node("Clip", {"c3", "lo", "hi"}, {"k3"});
  auto& avg = m.node("AveragePool", {"k3"}, {"ap"});
  testing::add_ints_attr(avg, "kernel_shape", {2, 2});
  testing::add_int_attr(avg, "ceil_mode", 1);
  m.node("Conv", {"ap", "w4", "b4"}, {"c4"});
  m.node("GlobalAveragePool", {"c4"}, {"g"});
  m.node("Flatten", {"g"}, {"f"});
  m.node("MatMul", {"f", "fc"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

std::map<std::string, int> nhwc_counts(const Session& s) {
  std::map<std::string, int> counts;
  for (const auto& n : s.placement().nodes)
    if (n.domain == "loom.nhwc" || n.op_type == "Transpose") ++counts[n.op_type + " on " + n.provider];
  return counts;
}

TEST(CudaNhwc, TypesFollowPreferNhwc) {
  using V = std::vector<int32_t>;
  EXPECT_EQ(cuda::nhwc_types(cuda::parse_ep_options({})), V{LOOM_DTYPE_FLOAT16}) << "auto: tensor cores only";
  EXPECT_EQ(cuda::nhwc_types(cuda::parse_ep_options({{"use_tf32", "1"}})), (V{LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16}));
  EXPECT_EQ(cuda::nhwc_types(cuda::parse_ep_options({{"precision", "fp16"}})),
            (V{LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16}));
  EXPECT_EQ(cuda::nhwc_types(cuda::parse_ep_options({{"prefer_nhwc", "true"}})),
            (V{LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16}));
  EXPECT_EQ(cuda::nhwc_types(cuda::parse_ep_options({{"prefer_nhwc", "false"}, {"use_tf32", "1"}})), V{});
  EXPECT_EQ(cuda::nhwc_types(cuda::parse_ep_options({{"prefer_nhwc", "auto"}})), V{LOOM_DTYPE_FLOAT16});
  EXPECT_THROW(cuda::parse_ep_options({{"prefer_nhwc", "maybe"}}), sdk::Error);
}

TEST(CudaNhwc, DimOrdersAndAlgorithmKeys) {
  EXPECT_EQ(cuda::nchw_order({2, 7, 9, 16}), (Dims{2, 16, 7, 9}));
  EXPECT_EQ(cuda::nhwc_order({2, 16, 7, 9}), (Dims{2, 7, 9, 16}));
  EXPECT_EQ(cuda::nchw_order({32, 3, 3, 8}), (Dims{32, 8, 3, 3})) << "OHWI weight as KCRS";
  // An algorithm chosen for NCHW memory is never reused for NHWC.
  cuda::CudnnConvShape s = cuda::cudnn_conv_shape({1, 8, 9, 9}, {16, 8, 3, 3}, {1, 16, 9, 9}, {1, 1}, {1, 1}, {1, 1}, 1,
                                                  LOOM_DTYPE_FLOAT16);
  const std::string nchw = cuda::conv_choice_key("fwd", s, 0, false);
  s.nhwc = true;
  EXPECT_NE(cuda::conv_choice_key("fwd", s, 0, false), nchw);
}

TEST(CudaNhwc, LayoutPhasePlacesChannelsLastChainsOnCuda) {
  const std::map<std::string, std::string> virtual_device = {{"virtual_device", "1"}};
  auto options = [&](std::map<std::string, std::string> extra) {
    extra.insert(virtual_device.begin(), virtual_device.end());
    return std::map<std::string, std::map<std::string, std::string>>{{"cuda", extra}};
  };
  const std::vector<std::string> providers = {"cuda", "reference"};
  constexpr auto kExtended = OptimizationLevel::kExtended;
  // float16 compute (config precision): channels-last by default, one
  // Transpose in and one out, every node on cuda.
  auto half = Session::create_from_bytes(env_with(providers, kExtended, options({}), Precision::kFloat16), chain_model());
  ASSERT_TRUE(half.has_value()) << half.status().message();
  const std::map<std::string, int> want = {{"Transpose on cuda", 2},
                                           {"FusedConv on cuda", 3},
                                           {"Conv on cuda", 1},
                                           {"MaxPool on cuda", 1},
                                           {"AveragePool on cuda", 1},
                                           {"GlobalAveragePool on cuda", 1}};
  EXPECT_EQ(nhwc_counts(**half), want);
  for (const auto& n : (*half)->placement().nodes) EXPECT_EQ(n.provider, "cuda") << n.node_name << ": " << n.reason;
  // float32: NCHW unless TF32 or prefer_nhwc=true.
  auto fp32 = Session::create_from_bytes(env_with(providers, kExtended, options({})), chain_model());
  ASSERT_TRUE(fp32.has_value()) << fp32.status().message();
  EXPECT_TRUE(nhwc_counts(**fp32).empty());
  for (const auto& extra : std::vector<std::map<std::string, std::string>>{{{"use_tf32", "1"}}, {{"prefer_nhwc", "1"}}}) {
    auto s = Session::create_from_bytes(env_with(providers, kExtended, options(extra)), chain_model());
    ASSERT_TRUE(s.has_value()) << s.status().message();
    EXPECT_EQ(nhwc_counts(**s), want) << extra.begin()->first;
  }
  auto off = Session::create_from_bytes(
      env_with(providers, kExtended, options({{"prefer_nhwc", "0"}}), Precision::kFloat16), chain_model());
  ASSERT_TRUE(off.has_value()) << off.status().message();
  EXPECT_TRUE(nhwc_counts(**off).empty());
}

TEST(CudaNhwc, ConvolutionsCudnnCannotPadAreDeclined) {
  // Asymmetric pads and SAME_UPPER need the NCHW pre-pad: cuda declines
  // the channels-last form, saying why (the layout phase then keeps the
  // NCHW node, which cuda runs).
  for (const bool same_upper : {false, true}) {
    testing::ModelBuilder m(13);
    m.import_domain("loom.nhwc", 1);
    m.input("x", kFloat16, {1, 9, 9, 4});
    m.input("w", kFloat16, {8, 3, 3, 4});
    auto& n = m.node("Conv", {"x", "w"}, {"y"}, "nhwc", "loom.nhwc");
    if (same_upper) testing::add_string_attr(n, "auto_pad", "SAME_UPPER");
    else testing::add_ints_attr(n, "pads", {0, 1, 1, 0});
    m.output("y", kFloat16, {});
    auto s = Session::create_from_bytes(
        env_with({"cuda"}, OptimizationLevel::kDisabled, {{"cuda", {{"virtual_device", "1"}}}}), m.bytes());
    ASSERT_FALSE(s.has_value());
    EXPECT_NE(s.status().message().find(same_upper ? "auto_pad SAME_UPPER" : "asymmetric pads"), std::string::npos)
        << s.status().message();
  }
}

// On a GPU: one loom.nhwc node on cuda against the reference EP's.
void check_nhwc(const std::string& op, int32_t type, const std::vector<std::pair<std::string, Dims>>& inputs,
                const Attrs& attrs, const std::string& what) {
  testing::ModelBuilder m(17);
  m.import_domain("loom.nhwc", 1);
  std::vector<std::string> names;
  std::map<std::string, Tensor> feeds;
  uint32_t seed = 3;
  for (const auto& [name, dims] : inputs) {
    names.push_back(name);
    if (name.empty()) continue;
    m.input(name, type, dims);
    feeds.emplace(name, random_tensor(type == kFloat16 ? DType::kFloat16 : DType::kFloat, dims, seed++));
  }
  auto& n = m.node(op, names, {"y"}, op, "loom.nhwc");
  if (attrs) attrs(n);
  m.output("y", type, Dims(4, -1));
  const std::map<std::string, std::map<std::string, std::string>> nhwc = {{"cuda", {{"prefer_nhwc", "1"}}},
                                                                           {"reference", {{"prefer_nhwc", "1"}}}};
  static auto gpu = env_with({"cuda"}, OptimizationLevel::kDisabled, nhwc);
  static auto ref = env_with({"reference"}, OptimizationLevel::kDisabled, nhwc);
  const Tolerance tol = type == kFloat16 ? Tolerance{1e-2, 1e-2} : Tolerance{1e-4, 1e-5};
  expect_matches_reference_in(gpu, ref, m.bytes(), feeds, tol,
                              op + (type == kFloat16 ? " float16 " : " float ") + what);
}

Attrs ints(std::vector<std::pair<std::string, std::vector<int64_t>>> v, int64_t group = 1) {
  return [v, group](::onnx::NodeProto& n) {
    for (const auto& [k, x] : v) testing::add_ints_attr(n, k, x);
    if (group != 1) testing::add_int_attr(n, "group", group);
  };
}

TEST(CudaNhwc, ConvolutionsMatchTheReference) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kFloat, kFloat16}) {
    check_nhwc("Conv", t, {{"x", {2, 9, 11, 8}}, {"w", {16, 3, 3, 8}}, {"b", {16}}}, ints({{"pads", {1, 1, 1, 1}}}),
               "3x3 pads 1");
    check_nhwc("Conv", t, {{"x", {2, 9, 11, 8}}, {"w", {16, 3, 3, 8}}}, ints({{"strides", {2, 2}}}), "stride 2");
    check_nhwc("Conv", t, {{"x", {1, 9, 11, 8}}, {"w", {16, 3, 3, 4}}, {"b", {16}}},
               ints({{"pads", {1, 1, 1, 1}}}, 2), "group 2");
    check_nhwc("Conv", t, {{"x", {2, 12, 10, 16}}, {"w", {16, 3, 3, 1}}, {"b", {16}}},
               ints({{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}}, 16), "depthwise dilated");
    check_nhwc("Conv", t, {{"x", {2, 7, 7, 32}}, {"w", {64, 1, 1, 32}}}, ints({}), "1x1");
  }
}

TEST(CudaNhwc, FusedConvolutionsMatchTheReference) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kFloat, kFloat16})
    for (const std::string act : {"Relu", "", "Clip"})
      for (const bool z : {false, true}) {
        std::vector<std::pair<std::string, Dims>> in = {{"x", {2, 9, 11, 8}}, {"w", {16, 3, 3, 8}}, {"b", {16}}};
        if (z) in.push_back({"z", {2, 9, 11, 16}});
        check_nhwc("FusedConv", t, in,
                   [&](::onnx::NodeProto& n) {
                     testing::add_ints_attr(n, "pads", {1, 1, 1, 1});
                     if (!act.empty()) testing::add_string_attr(n, "activation", act);
                     if (act == "Clip") testing::add_floats_attr(n, "activation_params", {0.f, 0.5f});
                   },
                   (act.empty() ? "identity" : act) + (z ? " Z" : ""));
      }
}

TEST(CudaNhwc, PoolsMatchTheReference) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kFloat, kFloat16}) {
    check_nhwc("MaxPool", t, {{"x", {2, 11, 13, 24}}},
               ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}), "3x3 stride 2");
    check_nhwc("AveragePool", t, {{"x", {2, 11, 13, 24}}},
               [](::onnx::NodeProto& n) {
                 testing::add_ints_attr(n, "kernel_shape", {2, 3});
                 testing::add_ints_attr(n, "pads", {0, 1, 1, 1});
                 testing::add_int_attr(n, "count_include_pad", 1);
                 testing::add_int_attr(n, "ceil_mode", 1);
               },
               "count_include_pad ceil_mode");
    check_nhwc("GlobalAveragePool", t, {{"x", {3, 7, 7, 40}}}, nullptr, "");
    check_nhwc("GlobalMaxPool", t, {{"x", {3, 7, 7, 40}}}, nullptr, "");
  }
}

TEST(CudaNhwc, ChainMatchesTheReferenceInNchw) {
  LOOM_SKIP_WITHOUT_GPU();
  auto gpu = env_with({"cuda"}, OptimizationLevel::kExtended, {{"cuda", {{"prefer_nhwc", "1"}}}});
  auto ref = env_with({"reference"}, OptimizationLevel::kDisabled, {});
  auto s = make_session(gpu, chain_model());
  ASSERT_TRUE(s);
  EXPECT_EQ(nhwc_counts(*s)["Transpose on cuda"], 2);
  const std::map<std::string, Tensor> feeds = {{"x", random_tensor(DType::kFloat, {4, 3, 32, 32}, 5)}};
  expect_matches_reference_in(gpu, ref, chain_model(), feeds, {1e-4, 1e-5}, "chain");
  // The same chain's convolutions as cuDNN graph-API plans (channels-last,
  // FMA engines: no TF32 asked for).
  auto graph = env_with({"cuda"}, OptimizationLevel::kExtended,
                        {{"cuda", {{"prefer_nhwc", "1"}, {"cudnn_conv_api", "graph"}}}});
  expect_matches_reference_in(graph, ref, chain_model(), feeds, {1e-4, 1e-5}, "chain, graph API");
}

}  // namespace
}  // namespace loom
