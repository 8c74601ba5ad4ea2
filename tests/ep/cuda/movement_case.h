// Test helper of the CUDA data-movement tests (movement_test.cpp,
// slicing_test.cpp, resize_test.cpp): one-node models against the
// reference EP, exact comparison by default.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ep/cuda/cuda_compare.h"

namespace loom::cuda_testing::movement {

using Dims = std::vector<int64_t>;

constexpr Tolerance kExact{0, 0};
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

inline int32_t onnx_type(DType t) { return static_cast<int32_t>(t); }

// One model under test: graph inputs fed random (or given) tensors,
// initializers for the shape operands, nodes, outputs. Integer and bool
// outputs are cast to float first: placement.cpp leaves a node whose
// integer result only leaves the graph to a host provider (shape
// arithmetic), which would keep the kernel from being tested. (Cast takes
// `to` as an int from opset 6: integer outputs need opset >= 6.)
class Case {
 public:
  explicit Case(int64_t opset = 17) : m_(opset) {}
  Case& data(const std::string& name, DType type, const Dims& dims, float lo = -1000.f, float hi = 1000.f) {
    if (type == DType::kFloat || type == DType::kFloat16 || type == DType::kDouble) lo = -1.f, hi = 1.f;
    return feed(name, random_tensor(type, dims, seed_++, lo, hi));
  }
  Case& feed(const std::string& name, const Tensor& t) {
    m_.input(name, onnx_type(t.dtype()), t.dims());
    inputs_[name] = t;
    return *this;
  }
  Case& ints(const std::string& name, const Dims& dims, const std::vector<int64_t>& v) {
    m_.int64_initializer(name, dims, v);
    return *this;
  }
  // A scalar initializer (dims {}) of `type` holding `v`.
  Case& scalar(const std::string& name, DType type, double v) {
    auto* t = m_.proto().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx_type(type));
    t->set_raw_data(bytes_of(type, v));
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& in,
                          const std::vector<std::string>& out) {
    return m_.node(op, in, out);
  }
  Case& out(const std::string& name, DType type, bool cast_integers = true) {
    std::string graph_name = name;
    if (cast_integers && (type == DType::kInt64 || type == DType::kInt32 || type == DType::kBool)) {
      graph_name = name + "_as_float";
      testing::add_int_attr(m_.node("Cast", {name}, {graph_name}), "to", kFloat);
      type = DType::kFloat;
    }
    auto* vi = m_.proto().mutable_graph()->add_output();  // no shape: the kernels say it
    vi->set_name(graph_name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx_type(type));
    return *this;
  }
  void check(const std::string& what, Tolerance tol = kExact) { expect_matches_reference(m_.bytes(), inputs_, tol, what); }

  static std::string bytes_of(DType type, double v) {
    auto raw = [](auto x) { return std::string(reinterpret_cast<const char*>(&x), sizeof(x)); };
    switch (type) {
      case DType::kFloat: return raw(static_cast<float>(v));
      case DType::kDouble: return raw(v);
      case DType::kInt32: return raw(static_cast<int32_t>(v));
      case DType::kInt64: return raw(static_cast<int64_t>(v));
      case DType::kFloat16: return raw(to_half(static_cast<float>(v)));
      case DType::kBool: return raw(static_cast<uint8_t>(v != 0));
      default: ADD_FAILURE() << "bytes_of: " << dtype_name(type); return {};
    }
  }

 private:
  testing::ModelBuilder m_;
  std::map<std::string, Tensor> inputs_;
  uint32_t seed_ = 1;
};

// x -> op(x, initializers...) -> y, with `attrs`, for x of `type` / `dims`.
// Operands are 1-d int64 initializers; an empty name leaves the input out.
inline void check_unary(int64_t opset, const std::string& op, DType type, const Dims& dims,
                        const std::vector<std::pair<std::string, std::vector<int64_t>>>& operands,
                        const std::function<void(::onnx::NodeProto&)>& attrs, const std::string& what) {
  Case c(opset);
  c.data("x", type, dims);
  std::vector<std::string> in = {"x"};
  for (const auto& [name, values] : operands) {
    if (name.empty()) {
      in.push_back("");
      continue;
    }
    c.ints(name, {static_cast<int64_t>(values.size())}, values);
    in.push_back(name);
  }
  auto& n = c.node(op, in, {"y"});
  if (attrs) attrs(n);
  c.out("y", type).check(what + " (" + dtype_name(type) + ")");
}

inline const std::vector<DType> kTypes = {DType::kFloat, DType::kFloat16, DType::kInt64, DType::kBool};
inline const Dims kOdd = {3, 37, 129};

}  // namespace loom::cuda_testing::movement
