// A node against its op's definition (opreg/op_def.h): the one check the
// loader makes of every node, of ONNX ops before ONNX's inference reads
// them (on the proto) and of plugin custom ops after (on the IR, with
// element types and the plugin's own inference: custom_op_check.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/node.h"
#include "loom/status.h"
#include "opreg/op_def.h"

namespace loom::onnxio {

// What the check reads of a node, whichever form it is in.
struct NodeSignature {
  std::vector<std::string> inputs, outputs;  // "" for an omitted value
  std::vector<std::pair<std::string, ir::AttrType>> attributes;
};

NodeSignature signature_of(const ir::Node& node);

enum class CheckDepth {
  kArity,     // input and output counts only (a plugin op that declared nothing more)
  kRequired,  // what every later version keeps: minimum counts, required and typed attributes
  kFull,      // counts, omitted single values, variadic arity, required, unknown and typed attributes
};

// How deeply a node at `opset` is checked against `def`: in full, except an
// ONNX op past the opsets Debian's ONNX library defines (its definition is
// then an older version's: kRequired), an ONNX Runtime contrib op (its
// versions grow in place: kRequired) and a plugin op that declared only
// its arity (`declared` false: kArity).
CheckDepth check_depth(const opreg::OpDef& def, int64_t opset, bool declared = true);

// Ok, or what is wrong ("has 2 input(s), the schema takes 1"), for the
// caller to put in context (the node, the op, its source).
Status check_node_signature(const NodeSignature& node, const opreg::OpDef& def, CheckDepth depth);

}  // namespace loom::onnxio
