// The CUDA EP's pooling and BatchNormalization against the reference EP:
// MaxPool (float types; int8 / uint8 at opset 12), AveragePool (with and
// without count_include_pad) and LpPool with pads, strides, dilations,
// ceil_mode and every auto_pad over 1-D, 2-D and 3-D inputs, at the opsets
// where each attribute appeared; the global pools; BatchNormalization
// (inference) at opsets 6 to 15, spatial=0, mixed parameter types (15),
// float, float16 and double; empty inputs.
#include <gtest/gtest.h>

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
using testing::add_float_attr;
using testing::add_int_attr;
using testing::add_ints_attr;
using testing::add_string_attr;
using testing::ModelBuilder;
using Dims = std::vector<int64_t>;
using Attrs = std::function<void(::onnx::NodeProto&)>;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kF16 = ::onnx::TensorProto::FLOAT16;
constexpr int32_t kF64 = ::onnx::TensorProto::DOUBLE;
constexpr int32_t kI8 = ::onnx::TensorProto::INT8;
constexpr int32_t kU8 = ::onnx::TensorProto::UINT8;

DType dtype_of(int32_t t) {
  switch (t) {
    case kF16:
      return DType::kFloat16;
    case kF64:
      return DType::kDouble;
    case kI8:
      return DType::kInt8;
    case kU8:
      return DType::kUint8;
    default:
      return DType::kFloat;
  }
}

std::string type_name(int32_t t) {
  switch (t) {
    case kF16:
      return "float16";
    case kF64:
      return "double";
    case kI8:
      return "int8";
    case kU8:
      return "uint8";
    default:
      return "float";
  }
}

Tolerance tolerance_of(int32_t t) {
  if (t == kF16) return cuda_testing::kHalfTolerance;
  if (t == kF64) return {1e-10, 1e-12};
  return {1e-5, 1e-5};
}

// One `op` node on x (`type`, dims `x`) into y of the same rank.
void check_unary(const std::string& op, int32_t type, const Dims& x, const Attrs& attrs, const std::string& what,
                 int64_t opset = 17) {
  ModelBuilder m(opset);
  m.input("x", type, x);
  ::onnx::NodeProto& n = m.node(op, {"x"}, {"y"}, op);
  if (attrs) attrs(n);
  m.output("y", type, Dims(x.size(), -1));
  std::map<std::string, Tensor> in;
  in.emplace("x", random_tensor(dtype_of(type), x, 3, -2.f, 2.f));
  expect_matches_reference(m.bytes(), in, tolerance_of(type),
                           op + " " + type_name(type) + " opset " + std::to_string(opset) + " " + what);
}

// A pooling window's attributes; empty or negative ones are left out.
Attrs window(Dims kernel, Dims strides = {}, Dims pads = {}, Dims dilations = {}, std::string auto_pad = "",
             int64_t ceil_mode = -1, int64_t count_include_pad = -1) {
  return [=](::onnx::NodeProto& n) {
    add_ints_attr(n, "kernel_shape", kernel);
    if (!strides.empty()) add_ints_attr(n, "strides", strides);
    if (!pads.empty()) add_ints_attr(n, "pads", pads);
    if (!dilations.empty()) add_ints_attr(n, "dilations", dilations);
    if (!auto_pad.empty()) add_string_attr(n, "auto_pad", auto_pad);
    if (ceil_mode >= 0) add_int_attr(n, "ceil_mode", ceil_mode);
    if (count_include_pad >= 0) add_int_attr(n, "count_include_pad", count_include_pad);
  };
}

TEST(CudaPool, MaxPool) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16, kF64}) {
    check_unary("MaxPool", t, {2, 3, 37, 29}, window({3, 3}, {2, 2}, {1, 1, 1, 1}), "3x3 stride 2 pads 1");
    check_unary("MaxPool", t, {1, 3, 16, 15}, window({3, 3}, {2, 2}, {1, 0, 0, 1}, {}, "", 1),
                "ceil_mode asymmetric pads", 10);
    check_unary("MaxPool", t, {1, 2, 17, 19}, window({3, 2}, {1, 2}, {2, 1, 2, 1}, {2, 3}), "dilations", 11);
    check_unary("MaxPool", t, {2, 5, 129}, window({4}, {3}, {1, 2}), "1-D");
    check_unary("MaxPool", t, {1, 2, 9, 10, 11}, window({2, 3, 2}, {2, 2, 2}, {}, {}, "", 1), "3-D ceil_mode", 12);
    check_unary("MaxPool", t, {1, 3, 16, 15}, window({3, 3}, {2, 2}, {}, {}, "SAME_UPPER"), "SAME_UPPER");
    check_unary("MaxPool", t, {1, 3, 16, 15}, window({2, 2}, {1, 1}, {}, {}, "SAME_LOWER"), "SAME_LOWER");
    check_unary("MaxPool", t, {1, 3, 16, 15}, window({3, 2}, {2, 2}, {}, {}, "VALID"), "VALID");
    check_unary("MaxPool", t, {0, 3, 8, 8}, window({2, 2}), "empty batch");
  }
  check_unary("MaxPool", kF32, {1, 3, 11, 12}, window({2, 2}, {2, 2}), "opset 1", 1);
  check_unary("MaxPool", kF32, {1, 3, 11, 12}, window({3, 3}, {2, 2}, {1, 1, 1, 1}), "opset 8", 8);
  for (int32_t t : {kI8, kU8}) {
    check_unary("MaxPool", t, {2, 3, 37, 29}, window({3, 3}, {2, 2}, {1, 1, 1, 1}), "3x3 stride 2", 12);
    check_unary("MaxPool", t, {1, 2, 15, 16}, window({2, 3}, {2, 2}, {0, 1, 1, 0}, {}, "", 1), "ceil_mode", 12);
  }
}

TEST(CudaPool, AveragePool) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16, kF64}) {
    for (int64_t cip : {0, 1}) {
      const std::string c = " count_include_pad " + std::to_string(cip);
      check_unary("AveragePool", t, {2, 3, 37, 29}, window({3, 3}, {2, 2}, {1, 1, 1, 1}, {}, "", -1, cip),
                  "3x3 stride 2 pads 1" + c);
      check_unary("AveragePool", t, {1, 3, 16, 15}, window({3, 3}, {2, 2}, {1, 0, 0, 1}, {}, "", 1, cip),
                  "ceil_mode asymmetric pads" + c, 10);
      check_unary("AveragePool", t, {1, 3, 14, 14}, window({3, 3}, {2, 2}, {1, 1, 1, 1}, {}, "", 1, cip),
                  "ceil_mode past the end padding" + c, 11);
      check_unary("AveragePool", t, {1, 2, 17, 19}, window({3, 2}, {1, 2}, {2, 1, 2, 1}, {2, 3}, "", 0, cip),
                  "dilations" + c, 19);
      check_unary("AveragePool", t, {1, 3, 16, 15}, window({3, 3}, {2, 2}, {}, {}, "SAME_UPPER", -1, cip),
                  "SAME_UPPER" + c);
      check_unary("AveragePool", t, {1, 3, 16, 15}, window({2, 2}, {1, 1}, {}, {}, "SAME_LOWER", -1, cip),
                  "SAME_LOWER" + c);
      check_unary("AveragePool", t, {2, 5, 129}, window({4}, {3}, {1, 2}, {}, "", -1, cip), "1-D" + c);
      check_unary("AveragePool", t, {1, 2, 9, 10, 11}, window({2, 3, 2}, {2, 2, 2}, {1, 1, 0, 0, 1, 1}, {}, "", 1, cip),
                  "3-D ceil_mode" + c, 11);
    }
    check_unary("AveragePool", t, {1, 3, 16, 15}, window({3, 2}, {2, 2}, {}, {}, "VALID"), "VALID");
    check_unary("AveragePool", t, {0, 3, 8, 8}, window({2, 2}), "empty batch");
  }
  check_unary("AveragePool", kF32, {1, 3, 11, 12}, window({2, 2}, {2, 2}), "opset 1", 1);
  check_unary("AveragePool", kF32, {1, 3, 11, 12}, window({3, 3}, {1, 1}, {1, 1, 1, 1}, {}, "", -1, 1), "opset 7", 7);
}

TEST(CudaPool, LpPool) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16, kF64}) {
    for (int64_t p : {1, 2, 3}) {
      Attrs a = [p](::onnx::NodeProto& n) {
        window({3, 3}, {2, 2}, {1, 1, 1, 1})(n);
        add_int_attr(n, "p", p);
      };
      check_unary("LpPool", t, {2, 3, 37, 29}, a, "p " + std::to_string(p), 11);
    }
    Attrs ceil = [](::onnx::NodeProto& n) {
      window({3, 2}, {2, 2}, {1, 0, 0, 1}, {2, 1}, "", 1)(n);
      add_int_attr(n, "p", 2);
    };
    check_unary("LpPool", t, {1, 3, 16, 15}, ceil, "ceil_mode dilations", 18);
  }
  Attrs p_float = [](::onnx::NodeProto& n) {
    window({2, 2}, {2, 2})(n);
    add_float_attr(n, "p", 3.f);
  };
  check_unary("LpPool", kF32, {1, 3, 11, 12}, p_float, "float p", 1);
}

TEST(CudaPool, GlobalPools) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16, kF64})
    for (const char* op : {"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"})
      for (const Dims& x : {Dims{2, 3, 37, 29}, Dims{3, 37, 129}, Dims{1, 2, 3, 4, 5}, Dims{2, 3, 1, 1},
                            Dims{0, 3, 4, 4}, Dims{1, 300, 7, 7}})
        check_unary(op, t, x, {}, "rank " + std::to_string(x.size()));
  Attrs p3 = [](::onnx::NodeProto& n) { add_int_attr(n, "p", 3); };
  check_unary("GlobalLpPool", kF32, {2, 3, 17, 19}, p3, "p 3");
}

// BatchNormalization at `opset` on X [x] with parameters of `param_type`
// (var positive).
void check_batch_norm(int64_t opset, int32_t type, int32_t param_type, const Dims& x, const std::string& what,
                      const Attrs& attrs = {}, int64_t params = -1) {
  ModelBuilder m(opset);
  m.input("x", type, x);
  const Dims p = {params >= 0 ? params : x[1]};
  for (const char* name : {"scale", "b", "mean", "var"}) m.input(name, param_type, p);
  ::onnx::NodeProto& n = m.node("BatchNormalization", {"x", "scale", "b", "mean", "var"}, {"y"}, "bn");
  if (attrs) attrs(n);
  m.output("y", type, Dims(x.size(), -1));
  std::map<std::string, Tensor> in;
  in.emplace("x", random_tensor(dtype_of(type), x, 5, -2.f, 2.f));
  in.emplace("scale", random_tensor(dtype_of(param_type), p, 6));
  in.emplace("b", random_tensor(dtype_of(param_type), p, 7));
  in.emplace("mean", random_tensor(dtype_of(param_type), p, 8));
  in.emplace("var", random_tensor(dtype_of(param_type), p, 9, 0.1f, 2.f));
  expect_matches_reference(m.bytes(), in, tolerance_of(type),
                           "BatchNormalization opset " + std::to_string(opset) + " " + type_name(type) + " " + what);
}

TEST(CudaPool, BatchNormalization) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16, kF64}) {
    check_batch_norm(15, t, t, {2, 5, 37, 3}, "4-D");
    check_batch_norm(15, t, t, {7, 5}, "2-D");
    check_batch_norm(15, t, t, {2, 3, 4, 5, 6}, "5-D");
    check_batch_norm(14, t, t, {3, 37, 129}, "3-D");
    check_batch_norm(9, t, t, {2, 4, 9, 7}, "4-D");
    check_batch_norm(15, t, t, {0, 5, 3, 3}, "empty batch");
  }
  check_batch_norm(15, kF16, kF32, {2, 5, 17, 3}, "float parameters");
  check_batch_norm(15, kF32, kF16, {2, 5, 17, 3}, "float16 parameters");
  check_batch_norm(15, kF32, kF32, {2, 5, 17, 3}, "epsilon 1e-3",
                   [](::onnx::NodeProto& n) { add_float_attr(n, "epsilon", 1e-3f); });
  check_batch_norm(15, kF32, kF32, {2, 5, 17, 3}, "training_mode 0",
                   [](::onnx::NodeProto& n) { add_int_attr(n, "training_mode", 0); });
  check_batch_norm(
      7, kF32, kF32, {3, 4, 5}, "spatial 0 per activation", [](::onnx::NodeProto& n) { add_int_attr(n, "spatial", 0); },
      20);
  check_batch_norm(7, kF32, kF32, {3, 4, 5}, "spatial 0 per channel",
                   [](::onnx::NodeProto& n) { add_int_attr(n, "spatial", 0); });
  check_batch_norm(6, kF32, kF32, {2, 4, 9, 7}, "is_test", [](::onnx::NodeProto& n) { add_int_attr(n, "is_test", 1); });
}

}  // namespace
}  // namespace loom
