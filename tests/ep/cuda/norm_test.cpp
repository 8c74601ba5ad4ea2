// The CUDA EP's normalisations against the reference EP:
// LayerNormalization (axis -1, -2 and 0, with and without B, broadcast
// Scale, the Mean / InvStdDev outputs, rows longer than 1024, the opset-16
// contrib form), InstanceNormalization, SimplifiedLayerNormalization,
// ONNX's RMSNormalization-23, and
// the com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization
// (each optional input and output, broadcast skip) and
// EmbedLayerNormalization (with and without segment, mask, position_ids).
// float and float16 (double where the reference has it). The reference runs
// the contrib ops in float and double only, so their float16 cases run the
// same graph in float on the reference, with the float16 inputs' values.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;
using Dims = std::vector<int64_t>;
using Inputs = std::map<std::string, Tensor>;

constexpr Tolerance kFloatTol{1e-4, 1e-5};
const std::string kMs = "com.microsoft";

int32_t onnx_type(DType t) { return static_cast<int32_t>(t); }

// Declares an output without a shape (the kernels say it).
void output(testing::ModelBuilder& m, const std::string& name, DType type) {
  auto* vi = m.proto().mutable_graph()->add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx_type(type));
}

// Node inputs or outputs with trailing unnamed (omitted) ones dropped.
std::vector<std::string> trimmed(std::vector<std::string> names) {
  while (!names.empty() && names.back().empty()) names.pop_back();
  return names;
}

// The same random values as a float16 tensor and as the float tensor of
// its decoded values, so both graphs see identical numbers.
struct Twin {
  Inputs half, single;
  void add(const std::string& name, const Dims& dims, uint32_t seed, float lo = -1.f, float hi = 1.f) {
    std::vector<float> v = random_floats(static_cast<size_t>(count_of(dims)), seed, lo, hi);
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      h[i] = to_half(v[i]);
      v[i] = from_half(h[i]);
    }
    half[name] = Tensor::from_vector(DType::kFloat16, dims, h);
    single[name] = Tensor::from_vector(DType::kFloat, dims, v);
  }
  void add_int32(const std::string& name, const Dims& dims, const std::vector<int32_t>& v) {
    half[name] = single[name] = Tensor::from_vector(DType::kInt32, dims, v);
  }
  const Inputs& of(DType t) const { return t == DType::kFloat16 ? half : single; }
};

// Runs a model built for a float type: float against the reference
// directly, float16 through expect_half_matches_float_reference.
template <class Build>
void check_both(const Build& build, const Twin& in, const std::string& what) {
  expect_matches_reference(build(DType::kFloat), in.single, kFloatTol, what + " float");
  expect_half_matches_float_reference(build(DType::kFloat16), in.half, build(DType::kFloat), in.single,
                                      kHalfTolerance, what + " float16");
}

// --- LayerNormalization ---

struct LayerNormCase {
  Dims x, scale, bias;  // bias empty: no B
  int64_t axis;
  bool stats;
  int64_t opset = 17;
};

void check_layer_norm(DType type, const LayerNormCase& c, Tolerance tol) {
  testing::ModelBuilder m(c.opset);
  Inputs in;
  m.input("x", onnx_type(type), c.x).input("scale", onnx_type(type), c.scale);
  in["x"] = random_tensor(type, c.x, 1, -2, 2);
  in["scale"] = random_tensor(type, c.scale, 2, 0.5f, 1.5f);
  if (!c.bias.empty()) {
    m.input("bias", onnx_type(type), c.bias);
    in["bias"] = random_tensor(type, c.bias, 3);
  }
  std::vector<std::string> outs = {"y"};
  if (c.stats) outs = {"y", "mean", "inv_std"};
  auto& n = m.node("LayerNormalization", c.bias.empty() ? std::vector<std::string>{"x", "scale"}
                                                        : std::vector<std::string>{"x", "scale", "bias"},
                   outs);
  testing::add_int_attr(n, "axis", c.axis);
  testing::add_float_attr(n, "epsilon", 1e-4f);
  output(m, "y", type);
  if (c.stats) output(m, "mean", DType::kFloat), output(m, "inv_std", DType::kFloat);
  expect_matches_reference(m.bytes(), in, tol,
                           "LayerNorm " + dtype_name(type) + " axis " + std::to_string(c.axis) + " cols " +
                               std::to_string(count_of(c.scale)) + " bias " + std::to_string(!c.bias.empty()) +
                               " stats " + std::to_string(c.stats) + " opset " + std::to_string(c.opset));
}

TEST(CudaNorm, LayerNormalization) {
  LOOM_SKIP_WITHOUT_GPU();
  const Dims x = {3, 37, 129};
  const std::vector<LayerNormCase> cases = {
      {x, {129}, {129}, -1, true},
      {x, {129}, {}, -1, false},
      {x, {37, 129}, {37, 129}, -2, true},
      {x, {1, 129}, {129}, -2, false},  // Scale broadcast over the normalised dims
      {x, {3, 37, 129}, {}, 0, true},
      {{2, 5, 2001}, {2001}, {2001}, -1, true},
      {{4, 33}, {33}, {33}, 1, true, 16},  // ORT's contrib form before opset 17
  };
  for (const LayerNormCase& c : cases) {
    check_layer_norm(DType::kFloat, c, kFloatTol);
    check_layer_norm(DType::kFloat16, c, kHalfTolerance);
  }
  check_layer_norm(DType::kDouble, cases[2], {1e-9, 1e-12});
}

TEST(CudaNorm, InstanceNormalization) {
  LOOM_SKIP_WITHOUT_GPU();
  for (const Dims& x : {Dims{2, 5, 7, 9}, Dims{2, 3, 3001}, Dims{3, 4}})
    for (DType type : {DType::kFloat, DType::kFloat16}) {
      const int64_t c = x[1];
      testing::ModelBuilder m(17);
      m.input("x", onnx_type(type), x).input("s", onnx_type(type), {c}).input("b", onnx_type(type), {c});
      testing::add_float_attr(m.node("InstanceNormalization", {"x", "s", "b"}, {"y"}), "epsilon", 1e-3f);
      output(m, "y", type);
      const Inputs in = {{"x", random_tensor(type, x, 4, -2, 2)},
                         {"s", random_tensor(type, {c}, 5, 0.5f, 1.5f)},
                         {"b", random_tensor(type, {c}, 6)}};
      expect_matches_reference(m.bytes(), in, type == DType::kFloat ? kFloatTol : kHalfTolerance,
                               "InstanceNormalization " + dtype_name(type) + " " + std::to_string(count_of(x)));
    }
}

// --- SimplifiedLayerNormalization (RMS norm, default domain) ---

TEST(CudaNorm, SimplifiedLayerNormalization) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int64_t axis : {-1, -2}) {
    const Dims x = {3, 37, 129};
    const Dims scale = axis == -1 ? Dims{129} : Dims{37, 129};
    Twin in;
    in.add("x", x, 7, -2, 2);
    in.add("scale", scale, 8, 0.5f, 1.5f);
    auto build = [&](DType type) {
      testing::ModelBuilder m(17);
      m.input("x", onnx_type(type), x).input("scale", onnx_type(type), scale);
      auto& n = m.node("SimplifiedLayerNormalization", {"x", "scale"}, {"y", "inv_std"});
      testing::add_int_attr(n, "axis", axis);
      testing::add_float_attr(n, "epsilon", 1e-5f);
      output(m, "y", type);
      output(m, "inv_std", DType::kFloat);
      return m.bytes();
    };
    check_both(build, in, "SimplifiedLayerNormalization axis " + std::to_string(axis));
  }
}

// ONNX's RMSNormalization-23: the same kernel, Y only.
TEST(CudaNorm, RmsNormalization23) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int64_t axis : {-1, 1}) {
    const Dims x = {3, 37, 129};
    const Dims scale = axis == -1 ? Dims{129} : Dims{37, 129};
    Twin in;
    in.add("x", x, 9, -2, 2);
    in.add("scale", scale, 10, 0.5f, 1.5f);
    auto build = [&](DType type) {
      testing::ModelBuilder m(23);
      m.input("x", onnx_type(type), x).input("scale", onnx_type(type), scale);
      auto& n = m.node("RMSNormalization", {"x", "scale"}, {"y"});
      testing::add_int_attr(n, "axis", axis);
      testing::add_float_attr(n, "epsilon", 1e-5f);
      output(m, "y", type);
      return m.bytes();
    };
    check_both(build, in, "RMSNormalization-23 axis " + std::to_string(axis));
  }
}

// --- SkipLayerNormalization / SkipSimplifiedLayerNormalization ---

struct SkipCase {
  Dims skip;
  bool beta, bias, mean, inv, sum;
  bool simplified = false;
};

void check_skip(const SkipCase& c) {
  const Dims x = {2, 7, 65}, h = {65};
  Twin in;
  in.add("x", x, 9);
  in.add("skip", c.skip, 10);
  in.add("gamma", h, 11, 0.5f, 1.5f);
  in.add("beta", h, 12);
  in.add("bias", h, 13);
  const std::string op = c.simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization";
  auto build = [&](DType type) {
    testing::ModelBuilder m(17);
    m.import_domain(kMs, 1);
    const int32_t t = onnx_type(type);
    m.input("x", t, x).input("skip", t, c.skip).input("gamma", t, h);
    std::vector<std::string> inputs = {"x", "skip", "gamma"};
    if (!c.simplified) inputs.push_back(c.beta ? "beta" : "");
    inputs.push_back(c.bias ? "bias" : "");
    inputs = trimmed(inputs);
    if (!c.simplified && c.beta) m.input("beta", t, h);
    if (c.bias) m.input("bias", t, h);
    const std::vector<std::string> outputs =
        trimmed({"y", c.mean ? "mean" : "", c.inv ? "inv_std" : "", c.sum ? "sum" : ""});
    testing::add_float_attr(m.node(op, inputs, outputs, "skip_ln", kMs), "epsilon", 1e-5f);
    output(m, "y", type);
    if (c.mean) output(m, "mean", DType::kFloat);
    if (c.inv) output(m, "inv_std", DType::kFloat);
    if (c.sum) output(m, "sum", type);
    return m.bytes();
  };
  // Graph inputs the model does not declare are left out of the feeds.
  Twin used = in;
  for (Inputs* feeds : {&used.half, &used.single}) {
    if (c.simplified || !c.beta) feeds->erase("beta");
    if (!c.bias) feeds->erase("bias");
  }
  check_both(build, used,
             op + " skip " + std::to_string(count_of(c.skip)) + " beta " + std::to_string(c.beta) + " bias " +
                 std::to_string(c.bias) + " outputs " + std::to_string(c.mean) + std::to_string(c.inv) +
                 std::to_string(c.sum));
}

TEST(CudaNorm, SkipLayerNormalization) {
  LOOM_SKIP_WITHOUT_GPU();
  const Dims full = {2, 7, 65};
  const std::vector<SkipCase> cases = {
      {full, false, false, false, false, false},
      {full, true, false, false, false, false},
      {full, true, true, true, true, true},
      {full, false, true, false, false, true},  // bias without beta: input 3 omitted
      {full, true, true, false, true, false},
      {{1, 7, 65}, true, false, true, false, false},
      {{7, 65}, true, true, false, false, true},
  };
  for (const SkipCase& c : cases) check_skip(c);
}

TEST(CudaNorm, SkipSimplifiedLayerNormalization) {
  LOOM_SKIP_WITHOUT_GPU();
  const Dims full = {2, 7, 65};
  check_skip({full, false, false, false, false, false, true});
  check_skip({full, false, true, true, true, true, true});
  check_skip({{7, 65}, false, true, false, true, false, true});
}

// --- EmbedLayerNormalization ---

struct EmbedCase {
  bool segment, mask, position_ids, mask_index, sum;
};

void check_embed(const EmbedCase& c) {
  const int64_t B = 3, S = 7, H = 65, V = 50, P = 16, G = 2;
  Twin in;
  std::vector<int32_t> ids(B * S), seg(B * S), mask(B * S), pos(B * S);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<int32_t>((i * 7 + 3) % V);
    seg[i] = static_cast<int32_t>(i % 3 == 0);
    mask[i] = static_cast<int32_t>((i * 5) % 3 != 0);
    pos[i] = static_cast<int32_t>((i * 3) % P);
  }
  in.add_int32("ids", {B, S}, ids);
  in.add("word", {V, H}, 14);
  in.add("pos", {P, H}, 15);
  in.add("gamma", {H}, 16, 0.5f, 1.5f);
  in.add("beta", {H}, 17);
  if (c.segment) in.add_int32("seg_ids", {B, S}, seg), in.add("seg", {G, H}, 18);
  if (c.mask) in.add_int32("mask", {B, S}, mask);
  if (c.position_ids) in.add_int32("pos_ids", {B, S}, pos);
  auto build = [&](DType type) {
    testing::ModelBuilder m(17);
    m.import_domain(kMs, 1);
    const int32_t t = onnx_type(type), i32 = onnx_type(DType::kInt32);
    m.input("ids", i32, {B, S}).input("word", t, {V, H}).input("pos", t, {P, H});
    m.input("gamma", t, {H}).input("beta", t, {H});
    if (c.segment) m.input("seg_ids", i32, {B, S}).input("seg", t, {G, H});
    if (c.mask) m.input("mask", i32, {B, S});
    if (c.position_ids) m.input("pos_ids", i32, {B, S});
    const std::vector<std::string> inputs =
        trimmed({"ids", c.segment ? "seg_ids" : "", "word", "pos", c.segment ? "seg" : "", "gamma", "beta",
                 c.mask ? "mask" : "", c.position_ids ? "pos_ids" : ""});
    const std::vector<std::string> outputs = trimmed({"y", c.mask_index ? "mask_index" : "", c.sum ? "sum" : ""});
    testing::add_float_attr(m.node("EmbedLayerNormalization", inputs, outputs, "embed_ln", kMs), "epsilon", 1e-5f);
    output(m, "y", type);
    if (c.mask_index) output(m, "mask_index", DType::kInt32);
    if (c.sum) output(m, "sum", type);
    return m.bytes();
  };
  check_both(build, in,
             "EmbedLayerNormalization segment " + std::to_string(c.segment) + " mask " + std::to_string(c.mask) +
                 " position_ids " + std::to_string(c.position_ids) + " outputs " + std::to_string(c.mask_index) +
                 std::to_string(c.sum));
}

TEST(CudaNorm, EmbedLayerNormalization) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<EmbedCase> cases = {
      {false, false, false, false, false}, {true, false, false, true, false}, {false, true, false, true, true},
      {true, true, false, true, true},     {true, true, true, true, false},   {false, false, true, false, true},
  };
  for (const EmbedCase& c : cases) check_embed(c);
}

}  // namespace
}  // namespace loom
