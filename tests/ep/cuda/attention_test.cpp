// The CUDA EP's com.microsoft Attention against the reference EP: no mask,
// 2-D [B, S] key masks, 1-D [B] lengths and [2B] ends and starts, 3-D
// [B, S, S] masks, the [B, 1] dummy, unidirectional, scale and
// mask_filter_value, qkv_hidden_sizes with a wider V, no bias, one token,
// more keys than a softmax block has threads, several heads and batches at
// odd sequence lengths. The reference EP has no float16 Attention: float16
// runs are compared with the float model on the reference, given the same
// half-rounded values. Masks keep at least one key per row (a fully masked
// row's softmax runs over scores shifted by the filter value, where float
// rounding of the shift, not the kernel, decides the last digits).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "cuda_compare.h"

namespace loom {
namespace {

using cuda_testing::Tolerance;
using cuda_testing::expect_half_matches_float_reference;
using testing::ModelBuilder;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kF16 = ::onnx::TensorProto::FLOAT16;
constexpr Tolerance kFloatTol{1e-4, 1e-5};
constexpr Tolerance kHalfTol{1e-2, 1e-2};

struct Case {
  std::string what;
  int64_t batch = 2, seq = 7, hidden = 24, heads = 3;
  std::vector<int64_t> qkv_sizes;  // qkv_hidden_sizes, empty: hidden each
  bool bias = true;
  std::vector<int64_t> mask_dims;  // empty: no mask
  std::vector<int32_t> mask;
  int64_t unidirectional = -1;  // -1: attribute absent
  float scale = 0.f;            // 0: attribute absent
  float filter = 0.f;           // 0: attribute absent
};

int64_t width_of(const Case& c) {
  return c.qkv_sizes.empty() ? 3 * c.hidden : c.qkv_sizes[0] + c.qkv_sizes[1] + c.qkv_sizes[2];
}
int64_t out_hidden(const Case& c) { return c.qkv_sizes.empty() ? c.hidden : c.qkv_sizes[2]; }

std::string model_of(const Case& c, int32_t type) {
  ModelBuilder m(17);
  m.import_domain("com.microsoft", 1);
  m.input("x", type, {c.batch, c.seq, c.hidden});
  m.input("w", type, {c.hidden, width_of(c)});
  std::vector<std::string> inputs = {"x", "w", ""};
  if (c.bias) {
    m.input("bias", type, {width_of(c)});
    inputs[2] = "bias";
  }
  if (!c.mask_dims.empty()) {
    m.input("mask", ::onnx::TensorProto::INT32, c.mask_dims);
    inputs.push_back("mask");
  }
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  ::onnx::NodeProto& n = m.node("Attention", inputs, {"y"}, "attention", "com.microsoft");
  testing::add_int_attr(n, "num_heads", c.heads);
  if (c.unidirectional >= 0) testing::add_int_attr(n, "unidirectional", c.unidirectional);
  if (c.scale != 0.f) testing::add_float_attr(n, "scale", c.scale);
  if (c.filter != 0.f) testing::add_float_attr(n, "mask_filter_value", c.filter);
  if (!c.qkv_sizes.empty()) testing::add_ints_attr(n, "qkv_hidden_sizes", c.qkv_sizes);
  m.output("y", type, {c.batch, c.seq, out_hidden(c)});
  return m.bytes();
}

// Inputs in [-1, 1), weights and bias in [-0.3, 0.3) (scores of a few
// units, as a trained layer's are).
std::map<std::string, Tensor> inputs_of(const Case& c, DType dtype) {
  std::map<std::string, Tensor> in;
  in.emplace("x", cuda_testing::random_tensor(dtype, {c.batch, c.seq, c.hidden}, 21));
  in.emplace("w", cuda_testing::random_tensor(dtype, {c.hidden, width_of(c)}, 22, -0.3f, 0.3f));
  if (c.bias) in.emplace("bias", cuda_testing::random_tensor(dtype, {width_of(c)}, 23, -0.3f, 0.3f));
  if (!c.mask_dims.empty()) in.emplace("mask", Tensor::from_vector(DType::kInt32, c.mask_dims, c.mask));
  return in;
}

void check(const Case& c) {
  cuda_testing::expect_matches_reference(model_of(c, kF32), inputs_of(c, DType::kFloat), kFloatTol,
                                         "Attention float: " + c.what);
  expect_half_matches_float_reference(model_of(c, kF16), model_of(c, kF32), inputs_of(c, DType::kFloat16), kHalfTol,
                                      "Attention float16: " + c.what);
}

std::vector<int32_t> key_mask(int64_t batch, int64_t seq) {
  std::vector<int32_t> m(static_cast<size_t>(batch * seq), 1);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < seq; ++t)
      if (t > 0 && ((t * 5 + b * 3) % 7 == 0 || t >= seq - 3 * b)) m[static_cast<size_t>(b * seq + t)] = 0;
  return m;
}

TEST(CudaAttention, NoMask) {
  LOOM_SKIP_WITHOUT_GPU();
  Case c;
  c.what = "B2 S7 hidden 24, 3 heads";
  check(c);
  Case one;
  one.what = "one token";
  one.batch = 1;
  one.seq = 1;
  one.hidden = 8;
  one.heads = 2;
  check(one);
  Case no_bias;
  no_bias.what = "no bias";
  no_bias.bias = false;
  check(no_bias);
  Case qkv;
  qkv.what = "qkv_hidden_sizes 16 16 24";
  qkv.seq = 13;
  qkv.hidden = 20;
  qkv.heads = 2;
  qkv.qkv_sizes = {16, 16, 24};
  check(qkv);
}

TEST(CudaAttention, KeyMaskAndLengths) {
  LOOM_SKIP_WITHOUT_GPU();
  Case keys;
  keys.what = "2-D mask B2 S37, 4 heads";
  keys.seq = 37;
  keys.hidden = 48;
  keys.heads = 4;
  keys.mask_dims = {2, 37};
  keys.mask = key_mask(2, 37);
  check(keys);
  Case lengths;
  lengths.what = "1-D lengths";
  lengths.seq = 9;
  lengths.hidden = 16;
  lengths.heads = 2;
  lengths.mask_dims = {2};
  lengths.mask = {5, 9};
  check(lengths);
  Case ends;
  ends.what = "1-D ends and starts";
  ends.seq = 9;
  ends.hidden = 16;
  ends.heads = 2;
  ends.mask_dims = {4};
  ends.mask = {7, 9, 2, 0};
  check(ends);
  Case dummy;
  dummy.what = "[B, 1] dummy mask";
  dummy.mask_dims = {2, 1};
  dummy.mask = {1, 1};
  check(dummy);
  Case filter;
  filter.what = "2-D mask, mask_filter_value -5000, scale 0.3";
  filter.seq = 11;
  filter.mask_dims = {2, 11};
  filter.mask = key_mask(2, 11);
  filter.filter = -5000.f;
  filter.scale = 0.3f;
  check(filter);
}

TEST(CudaAttention, FullMaskUnidirectionalAndLongRows) {
  LOOM_SKIP_WITHOUT_GPU();
  Case full;
  full.what = "3-D mask";
  full.seq = 6;
  full.hidden = 16;
  full.heads = 2;
  full.mask_dims = {2, 6, 6};
  for (int i = 0; i < 72; ++i) full.mask.push_back((i % 6 == 0 || (i * 7) % 5 != 0) ? 1 : 0);
  check(full);
  Case causal;
  causal.what = "unidirectional";
  causal.seq = 11;
  causal.hidden = 16;
  causal.heads = 4;
  causal.unidirectional = 1;
  check(causal);
  Case causal_mask = causal;
  causal_mask.what = "unidirectional with a 2-D mask";
  causal_mask.mask_dims = {2, 11};
  causal_mask.mask = key_mask(2, 11);
  check(causal_mask);
  Case off = causal;
  off.what = "unidirectional = 0";
  off.unidirectional = 0;
  check(off);
  Case longer;
  longer.what = "S 300 (rows longer than a block), lengths";
  longer.batch = 1;
  longer.seq = 300;
  longer.hidden = 64;
  longer.heads = 4;
  longer.mask_dims = {1};
  longer.mask = {257};
  check(longer);
}

}  // namespace
}  // namespace loom
