// Helpers for the ai.onnx.ml kernel tests (ml_*_test.cpp): a one-node model
// in the ai.onnx.ml domain with attribute setters, and checks for float
// outputs and refusals.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom::testing {

// A node of ai.onnx.ml at `ml_opset` (ai.onnx at 17) with inputs and outputs
// as OneNodeModel takes them.
struct MlNode : OneNodeModel {
  MlNode(const std::string& op, int64_t ml_opset, std::vector<std::pair<std::string, Tensor>> inputs,
         const std::vector<std::pair<std::string, int32_t>>& outputs)
      : OneNodeModel(op, 17, std::move(inputs), outputs) {
    node->set_domain("ai.onnx.ml");
    m.import_domain("ai.onnx.ml", ml_opset);
  }
  MlNode& ints(const std::string& name, const std::vector<int64_t>& v) {
    add_ints_attr(*node, name, v);
    return *this;
  }
  MlNode& floats(const std::string& name, const std::vector<float>& v) {
    add_floats_attr(*node, name, v);
    return *this;
  }
  MlNode& strings(const std::string& name, const std::vector<std::string>& v) {
    add_strings_attr(*node, name, v);
    return *this;
  }
  MlNode& str(const std::string& name, const std::string& v) {
    add_string_attr(*node, name, v);
    return *this;
  }
  MlNode& i(const std::string& name, int64_t v) {
    add_int_attr(*node, name, v);
    return *this;
  }
  MlNode& f(const std::string& name, float v) {
    add_float_attr(*node, name, v);
    return *this;
  }
  // The attribute named `name` (a test changes one entry to a near miss).
  ::onnx::AttributeProto& attr_named(const std::string& name) {
    for (auto& a : *node->mutable_attribute())
      if (a.name() == name) return a;
    ADD_FAILURE() << "no attribute " << name;
    return *node->add_attribute();
  }
  // A 1-D double tensor attribute (the `*_as_tensor` forms).
  MlNode& doubles(const std::string& name, const std::vector<double>& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(::onnx::TensorProto::DOUBLE);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (double x : v) t->add_double_data(x);
    return *this;
  }
};

inline Tensor ml_floats(Dims dims, std::vector<float> v) { return Tensor::from_vector(DType::kFloat, std::move(dims), v); }
inline Tensor ml_doubles(Dims dims, std::vector<double> v) { return Tensor::from_vector(DType::kDouble, std::move(dims), v); }
inline Tensor ml_int64s(Dims dims, std::vector<int64_t> v) { return Tensor::from_vector(DType::kInt64, std::move(dims), v); }
inline Tensor ml_int32s(Dims dims, std::vector<int32_t> v) { return Tensor::from_vector(DType::kInt32, std::move(dims), v); }

// Every element of float tensor `t` within `tol` of `expected` (NaN only
// where NaN is expected), and its dims `dims`.
inline void expect_floats_near(const Tensor& t, const Dims& dims, const std::vector<double>& expected, double tol = 1e-5) {
  EXPECT_EQ(t.dims(), dims);
  const std::vector<float> got = values_of(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
  }
}

// Runs `g` and expects a refusal whose message holds `fragment`.
inline void expect_refused(MlNode& g, const std::string& fragment) {
  auto out = g.run();
  ASSERT_FALSE(out.has_value()) << "expected a refusal mentioning '" << fragment << "'";
  EXPECT_NE(out.status().message().find(fragment), std::string::npos) << out.status().message();
}

// Runs `g`, failing the test (and returning empty) on an error.
inline std::vector<Tensor> run_ok(MlNode& g) {
  auto out = g.run();
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out.has_value() ? *out : std::vector<Tensor>{};
}

inline double ml_logistic(double v) { return 1.0 / (1.0 + std::exp(-v)); }

inline std::vector<double> ml_softmax(std::vector<double> v) {
  double m = v[0], s = 0;
  for (double x : v) m = std::max(m, x);
  for (double& x : v) s += (x = std::exp(x - m));
  for (double& x : v) x /= s;
  return v;
}

}  // namespace loom::testing
