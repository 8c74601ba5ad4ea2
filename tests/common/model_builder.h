// Builds small ONNX models in tests with the ONNX protobuf types, so tests
// do not depend on committed binary models.
#pragma once

#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace loom::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("loom-tests");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }
  ModelBuilder& import_domain(const std::string& domain, int64_t version) {
    auto* op = model_.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
    return *this;
  }
  // dims: -1 makes a symbolic dim named "d<i>".
  ModelBuilder& input(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
    set_type(model_.mutable_graph()->add_input(), name, elem_type, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
    set_type(model_.mutable_graph()->add_output(), name, elem_type, dims);
    return *this;
  }
  ModelBuilder& float_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                  const std::vector<float>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  // An int64 initializer; `dims` empty makes a scalar.
  ModelBuilder& int64_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  // An initializer of a small integer type (INT8, UINT8, INT32; int32_data
  // as ONNX stores them); `dims` empty makes a scalar.
  ModelBuilder& int_initializer(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims,
                                const std::vector<int32_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem_type);
    for (int64_t d : dims) t->add_dims(d);
    for (int32_t v : values) t->add_int32_data(v);
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op_type, std::initializer_list<std::string> inputs,
                          std::initializer_list<std::string> outputs, const std::string& name = "",
                          const std::string& domain = "") {
    return node(op_type, std::vector<std::string>(inputs), std::vector<std::string>(outputs), name, domain);
  }
  ::onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "",
                          const std::string& domain = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op_type);
    n->set_domain(domain);
    n->set_name(name.empty() ? op_type + "_" + std::to_string(model_.graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  ::onnx::ModelProto& proto() { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  static void set_type(::onnx::ValueInfoProto* vi, const std::string& name, int32_t elem_type,
                       const std::vector<int64_t>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] < 0) d->set_dim_param("d" + std::to_string(i));
      else d->set_dim_value(dims[i]);
    }
  }
  ::onnx::ModelProto model_;
};

inline void add_float_attr(::onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void add_floats_attr(::onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}

inline void add_string_attr(::onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline void add_strings_attr(::onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a->add_strings(x);
}

inline void add_ints_attr(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void add_int_attr(::onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

}  // namespace loom::testing
