// Building the nodes fusions emit.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace loom::transform {

constexpr char kMicrosoftDomain[] = "com.microsoft";

// A node of `domain` at the graph's opset for that domain (1 when the
// graph does not import it yet: the patch must import it).
inline ir::Node fused_node(const ir::Graph& g, const std::string& op, const std::string& domain,
                           std::vector<std::string> inputs, std::vector<std::string> outputs, std::string name) {
  ir::Node n;
  n.op_type = op;
  n.domain = domain;
  auto it = g.opsets.find(domain);
  n.opset = it == g.opsets.end() ? 1 : it->second;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.name = std::move(name);
  return n;
}

inline void set_float_attr(ir::Node& n, const std::string& name, float v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kFloat;
  a.f = v;
  n.attributes.push_back(std::move(a));
}

inline void set_string_attr(ir::Node& n, const std::string& name, std::string v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kString;
  a.s = std::move(v);
  n.attributes.push_back(std::move(a));
}

inline void set_floats_attr(ir::Node& n, const std::string& name, std::vector<float> v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kFloats;
  a.floats = std::move(v);
  n.attributes.push_back(std::move(a));
}

inline void set_int_attr(ir::Node& n, const std::string& name, int64_t v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kInt;
  a.i = v;
  n.attributes.push_back(std::move(a));
}

}  // namespace loom::transform
