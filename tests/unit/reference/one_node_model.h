// A one-node model around an op under test, run on the reference EP: graph
// inputs typed from the feeds (every dim symbolic, so nothing is checked
// before the kernel runs), outputs declared by element type only.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom::testing {

struct OneNodeModel {
  ModelBuilder m;
  ::onnx::NodeProto* node = nullptr;
  std::map<std::string, Tensor> feeds;

  // `inputs`: name and value in the op's input order; an empty name is an
  // omitted optional input. `outputs`: name and ONNX element type; an empty
  // name is an output left out.
  OneNodeModel(const std::string& op, int64_t opset, std::vector<std::pair<std::string, Tensor>> inputs,
               const std::vector<std::pair<std::string, int32_t>>& outputs)
      : m(opset) {
    std::vector<std::string> in_names, out_names;
    for (auto& [name, value] : inputs) {
      in_names.push_back(name);
      if (name.empty()) continue;
      m.input(name, static_cast<int32_t>(value.dtype()), std::vector<int64_t>(value.dims().size(), -1));
      feeds.emplace(name, std::move(value));
    }
    for (const auto& [name, type] : outputs) {
      out_names.push_back(name);
      if (name.empty()) continue;  // an output the node does not produce
      m.output(name, type, {});
      m.proto().mutable_graph()->mutable_output()->rbegin()->mutable_type()->mutable_tensor_type()->clear_shape();
    }
    node = &m.node(op, in_names, out_names, "under_test");
  }
  // `node` points into `m`: a copy would point into the original.
  OneNodeModel(const OneNodeModel&) = delete;
  OneNodeModel& operator=(const OneNodeModel&) = delete;
  OneNodeModel& attr(const std::string& name, int64_t v) {
    add_int_attr(*node, name, v);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, float v) {
    add_float_attr(*node, name, v);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, const std::string& v) {
    add_string_attr(*node, name, v);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, const std::vector<int64_t>& v) {
    add_ints_attr(*node, name, v);
    return *this;
  }
  // Creates a session and runs it once; an error from either comes back.
  Expected<std::vector<Tensor>> run() {
    auto s = Session::create_from_bytes(reference_env(), m.bytes());
    if (!s.has_value()) return s.status();
    return (*s)->run(feeds);
  }
};

}  // namespace loom::testing
