// The CUDA EP's matrix products against the reference EP: MatMul (2-D,
// 1-D operands, batched, batch broadcast in each direction and the
// broadcasts that need one GEMM per matrix, odd sizes, empty and K = 0
// products, opsets 9 / 13 / 17), Gemm (every transpose pair, alpha, beta,
// each C broadcast form, no C, beta 0, K = 0, opsets 7 to 13) and
// com.microsoft FusedMatMul (alpha, transposes, batches), in float, float16
// and double; the row-bias epilogue and com.microsoft FusedGemm's
// activations. The reference EP has no float16 FusedMatMul: float16 runs
// there are compared with the float model on the reference, given the same
// half-rounded values.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cuda_compare.h"

namespace loom {
namespace {

using cuda_testing::expect_matches_reference;
using cuda_testing::random_tensor;
using cuda_testing::Tolerance;
using cuda_testing::expect_half_matches_float_reference;
using testing::ModelBuilder;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kF16 = ::onnx::TensorProto::FLOAT16;
constexpr int32_t kF64 = ::onnx::TensorProto::DOUBLE;

// cuBLAS may sum in another order than the reference; float16 results are
// rounded once from float accumulation on both sides.
constexpr Tolerance kFloatTol{1e-4, 1e-5};
constexpr Tolerance kDoubleTol{1e-10, 1e-12};

DType dtype_of(int32_t t) { return t == kF16 ? DType::kFloat16 : t == kF64 ? DType::kDouble : DType::kFloat; }
Tolerance tolerance_of(int32_t t) {
  return t == kF16 ? cuda_testing::kHalfTolerance : t == kF64 ? kDoubleTol : kFloatTol;
}
std::string type_name(int32_t t) { return t == kF16 ? "float16" : t == kF64 ? "double" : "float"; }

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

struct Operand {
  std::string name;
  std::vector<int64_t> dims;
};

// One node `op` over `inputs` (all of `type`) into y of `out` dims.
std::string one_node(int64_t opset, const std::string& op, const std::string& domain, int32_t type,
                     const std::vector<Operand>& inputs, const std::vector<int64_t>& out,
                     const std::function<void(::onnx::NodeProto&)>& attrs = {}) {
  ModelBuilder m(opset);
  if (!domain.empty()) m.import_domain(domain, 1);
  std::vector<std::string> names;
  for (const Operand& in : inputs) {
    m.input(in.name, type, in.dims);
    names.push_back(in.name);
  }
  ::onnx::NodeProto& n = m.node(op, names, {"y"}, op, domain);
  if (attrs) attrs(n);
  m.output("y", type, out);
  return m.bytes();
}

std::map<std::string, Tensor> random_inputs(int32_t type, const std::vector<Operand>& inputs) {
  std::map<std::string, Tensor> out;
  uint32_t seed = 11;
  for (const Operand& in : inputs) out.emplace(in.name, random_tensor(dtype_of(type), in.dims, seed++));
  return out;
}

void check_matmul(int32_t type, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                  const std::vector<int64_t>& out, int64_t opset = 17) {
  const std::vector<Operand> ins = {{"a", a}, {"b", b}};
  expect_matches_reference(one_node(opset, "MatMul", "", type, ins, out), random_inputs(type, ins), tolerance_of(type),
                           "MatMul " + type_name(type) + " " + dims_text(a) + " x " + dims_text(b));
}

TEST(CudaMatMul, MatMulShapesAndTypes) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16, kF64}) {
    check_matmul(t, {37, 61}, {61, 129}, {37, 129});
    check_matmul(t, {61}, {61, 129}, {129});
    check_matmul(t, {37, 61}, {61}, {37});
    check_matmul(t, {61}, {61}, {});
    check_matmul(t, {3, 37, 61}, {3, 61, 29}, {3, 37, 29});
    check_matmul(t, {3, 37, 61}, {61, 29}, {3, 37, 29});              // B shared: rows folded
    check_matmul(t, {37, 61}, {3, 61, 29}, {3, 37, 29});              // A shared: stride 0
    check_matmul(t, {2, 3, 5, 7}, {7, 9}, {2, 3, 5, 9});
    check_matmul(t, {1, 1, 5, 7}, {2, 3, 7, 9}, {2, 3, 5, 9});        // A broadcast both dims
    check_matmul(t, {2, 3, 5, 7}, {1, 3, 7, 9}, {2, 3, 5, 9});        // B broadcast on one dim: a GEMM per matrix
    check_matmul(t, {2, 1, 5, 7}, {1, 3, 7, 9}, {2, 3, 5, 9});        // both broadcast: a GEMM per matrix
    check_matmul(t, {2, 3, 61}, {61}, {2, 3});
    check_matmul(t, {61}, {2, 61, 5}, {2, 5});
  }
}

TEST(CudaMatMul, MatMulOpsetsEmptyAndZeroK) {
  LOOM_SKIP_WITHOUT_GPU();
  check_matmul(kF32, {4, 33}, {33, 6}, {4, 6}, 9);
  check_matmul(kF32, {2, 4, 33}, {33, 6}, {2, 4, 6}, 13);
  check_matmul(kF16, {4, 33}, {33, 6}, {4, 6}, 9);
  check_matmul(kF32, {0, 61}, {61, 29}, {0, 29});
  check_matmul(kF32, {3, 0, 5}, {5, 4}, {3, 0, 4});
  check_matmul(kF32, {3, 0}, {0, 4}, {3, 4});  // K = 0: zeros
  check_matmul(kF16, {2, 3, 0}, {0, 4}, {2, 3, 4});
}

void check_gemm(int32_t type, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const std::vector<int64_t>* c,
                float alpha, float beta, int64_t opset = 13) {
  std::vector<Operand> ins = {{"a", ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}},
                              {"b", tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}}};
  if (c != nullptr) ins.push_back({"c", *c});
  const std::string model = one_node(opset, "Gemm", "", type, ins, {m, n}, [&](::onnx::NodeProto& node) {
    testing::add_int_attr(node, "transA", ta ? 1 : 0);
    testing::add_int_attr(node, "transB", tb ? 1 : 0);
    testing::add_float_attr(node, "alpha", alpha);
    testing::add_float_attr(node, "beta", beta);
  });
  expect_matches_reference(model, random_inputs(type, ins), tolerance_of(type),
                           "Gemm " + type_name(type) + " opset " + std::to_string(opset) + " transA " +
                               std::to_string(ta) + " transB " + std::to_string(tb) + " " + std::to_string(m) + "x" +
                               std::to_string(n) + "x" + std::to_string(k) + " C " +
                               (c ? dims_text(*c) : "none") + " alpha " + std::to_string(alpha) + " beta " +
                               std::to_string(beta));
}

TEST(CudaMatMul, GemmTransposesAlphaBeta) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<int64_t> full = {37, 29};
  for (int32_t t : {kF32, kF16, kF64})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_gemm(t, ta, tb, 37, 29, 61, &full, 1.f, 1.f);
        check_gemm(t, ta, tb, 37, 29, 61, &full, 0.5f, -2.f);
      }
  check_gemm(kF32, false, false, 37, 129, 61, nullptr, 1.f, 1.f);  // no C (opset 11+)
  check_gemm(kF16, true, true, 37, 129, 61, nullptr, 1.5f, 1.f);
  check_gemm(kF32, false, true, 37, 29, 61, &full, 1.f, 0.f);  // beta 0: C unread
  check_gemm(kF32, false, true, 37, 29, 61, &full, 0.75f, 0.25f, 7);
  check_gemm(kF32, true, false, 37, 29, 61, &full, 1.f, 1.f, 9);
  check_gemm(kF32, true, true, 37, 29, 61, nullptr, 1.f, 1.f, 11);
}

TEST(CudaMatMul, GemmCBroadcastFormsAndZeroK) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<std::vector<int64_t>> forms = {{}, {1}, {29}, {1, 29}, {37, 1}, {1, 1}, {37, 29}};
  for (int32_t t : {kF32, kF16})
    for (const auto& c : forms) check_gemm(t, false, true, 37, 29, 61, &c, 1.25f, 0.5f);
  const std::vector<int64_t> row = {7};
  check_gemm(kF32, false, false, 5, 7, 0, &row, 1.f, 0.5f);   // K = 0: beta * C
  check_gemm(kF32, false, false, 5, 7, 0, nullptr, 1.f, 1.f);  // K = 0, no C: zeros
  check_gemm(kF32, false, false, 0, 7, 3, &row, 1.f, 1.f);     // empty output
}

// Row biases with beta 1 take cuBLASLt's bias epilogue (kernels/gemm_lt.h):
// every transpose pair, odd and single-column widths, float and float16
// (double keeps the general path, and must agree as well).
TEST(CudaMatMul, GemmRowBiasEpilogue) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16, kF64})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int64_t n : {int64_t{29}, int64_t{64}, int64_t{1}}) {
          const std::vector<int64_t> flat = {n}, row = {1, n};
          check_gemm(t, ta, tb, 37, n, 61, &flat, 1.f, 1.f);
          check_gemm(t, ta, tb, 37, n, 61, &row, 0.5f, 1.f);
        }
}

// com.microsoft FusedGemm: Gemm then the activation (ReLU as a cuBLASLt
// epilogue with or without a bias; the others in place after the product),
// against the reference's FusedGemm (float, double) or its float model
// (float16 inputs).
void check_fused_gemm(int32_t type, const std::string& activation, const std::vector<int64_t>* c, float beta,
                      const std::map<std::string, float>& act_attrs = {}) {
  const int64_t m = 23, n = 40, k = 33;
  std::vector<Operand> ins = {{"a", {m, k}}, {"b", {n, k}}};
  if (c != nullptr) ins.push_back({"c", *c});
  auto model = [&](int32_t t) {
    return one_node(13, "FusedGemm", "com.microsoft", t, ins, {m, n}, [&](::onnx::NodeProto& node) {
      testing::add_int_attr(node, "transB", 1);
      testing::add_float_attr(node, "beta", beta);
      testing::add_string_attr(node, "activation", activation);
      for (const auto& [name, v] : act_attrs) testing::add_float_attr(node, "activation_" + name, v);
    });
  };
  const std::string what = "FusedGemm " + type_name(type) + " activation " + activation + " C " +
                           (c ? dims_text(*c) : "none") + " beta " + std::to_string(beta);
  if (type == kF16)
    expect_half_matches_float_reference(model(kF16), model(kF32), random_inputs(kF16, ins),
                                        cuda_testing::kHalfTolerance, what);
  else
    expect_matches_reference(model(type), random_inputs(type, ins), tolerance_of(type), what);
}

TEST(CudaMatMul, FusedGemmActivations) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<int64_t> bias = {40}, full = {23, 40};
  for (int32_t t : {kF32, kF16, kF64}) {
    check_fused_gemm(t, "Relu", &bias, 1.f);   // bias + ReLU epilogue
    check_fused_gemm(t, "Relu", nullptr, 1.f);  // ReLU epilogue
    check_fused_gemm(t, "Relu", &full, 1.f);    // general path, ReLU after
    check_fused_gemm(t, "Relu", &bias, 0.5f);
  }
  check_fused_gemm(kF32, "Tanh", &bias, 1.f);
  check_fused_gemm(kF32, "Sigmoid", &full, 1.f);
  check_fused_gemm(kF32, "Softsign", &bias, 1.f);
  check_fused_gemm(kF32, "Softplus", &bias, 1.f);
  check_fused_gemm(kF32, "LeakyRelu", &bias, 1.f, {{"alpha", 0.2f}});
  check_fused_gemm(kF32, "Elu", &bias, 1.f, {{"alpha", 0.7f}});
  check_fused_gemm(kF32, "ThresholdedRelu", &bias, 1.f, {{"alpha", 0.3f}});
  check_fused_gemm(kF32, "HardSigmoid", &bias, 1.f, {{"alpha", 0.3f}, {"beta", 0.4f}});
  check_fused_gemm(kF64, "Selu", &bias, 1.f, {{"alpha", 1.5f}, {"gamma", 1.1f}});
}

void check_fused(int32_t type, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                 const std::vector<int64_t>& out, bool ta, bool tb, float alpha) {
  const std::vector<Operand> ins = {{"a", a}, {"b", b}};
  auto model = [&](int32_t t) {
    return one_node(17, "FusedMatMul", "com.microsoft", t, ins, out, [&](::onnx::NodeProto& node) {
      testing::add_float_attr(node, "alpha", alpha);
      testing::add_int_attr(node, "transA", ta ? 1 : 0);
      testing::add_int_attr(node, "transB", tb ? 1 : 0);
    });
  };
  const std::string what = "FusedMatMul " + type_name(type) + " " + dims_text(a) + " x " + dims_text(b) +
                           " transA " + std::to_string(ta) + " transB " + std::to_string(tb);
  if (type == kF16)
    expect_half_matches_float_reference(model(kF16), model(kF32), random_inputs(kF16, ins),
                                        cuda_testing::kHalfTolerance, what);
  else
    expect_matches_reference(model(type), random_inputs(type, ins), tolerance_of(type), what);
}

TEST(CudaMatMul, FusedMatMul) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16, kF64}) {
    check_fused(t, {37, 61}, {61, 29}, {37, 29}, false, false, 0.5f);
    check_fused(t, {61, 37}, {61, 29}, {37, 29}, true, false, 1.f);
    check_fused(t, {37, 61}, {29, 61}, {37, 29}, false, true, -1.5f);
    check_fused(t, {3, 61, 37}, {3, 29, 61}, {3, 37, 29}, true, true, 2.f);
    check_fused(t, {3, 61, 37}, {61, 29}, {3, 37, 29}, true, false, 1.f);
    check_fused(t, {2, 1, 7, 5}, {1, 3, 9, 7}, {2, 3, 5, 9}, true, true, 0.25f);
    check_fused(t, {61}, {29, 61}, {29}, true, true, 1.f);  // transA ignored for a 1-D A
  }
}

}  // namespace
}  // namespace loom
