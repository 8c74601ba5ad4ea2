// A node of the IR graph. Values are referred to by name (ONNX's SSA names);
// an empty input name is an omitted optional input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attribute.h"

namespace loom::opreg {
struct OpDef;
}

namespace loom::ir {

using NodeId = uint64_t;

struct Node {
  NodeId id = 0;  // stable within its graph; never reused
  std::string name;
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain ("ai.onnx" is normalised to "")
  int64_t opset = 0;   // the model's opset for `domain`
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  // What the op means (opreg/op_def.h), bound at load; NULL for an op no
  // registry defines and for a node made since. Read it through
  // onnxio::op_def_of, which also notices a node whose op changed.
  const opreg::OpDef* op_def = nullptr;

  const Attribute* find_attribute(const std::string& attr_name) const {
    for (const Attribute& a : attributes)
      if (a.name == attr_name) return &a;
    return nullptr;
  }
  // The attribute's value when it is present with that type, else `fallback`.
  int64_t int_attr(const std::string& attr_name, int64_t fallback) const {
    const Attribute* a = find_attribute(attr_name);
    return a != nullptr && a->type == AttrType::kInt ? a->i : fallback;
  }
  float float_attr(const std::string& attr_name, float fallback) const {
    const Attribute* a = find_attribute(attr_name);
    return a != nullptr && a->type == AttrType::kFloat ? a->f : fallback;
  }
  // "name (op_type)" or "#id (op_type)" for unnamed nodes, for messages.
  std::string label() const;
};

}  // namespace loom::ir
