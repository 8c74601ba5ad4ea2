// A node attribute, kept in the form ONNX defines (including nested graphs).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loom/tensor.h"

namespace loom::ir {

class Graph;

// Values match ONNX AttributeProto.AttributeType and LOOM_ATTR_*.
enum class AttrType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kTypeProto = 13,
};

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::shared_ptr<Tensor> tensor;
  std::vector<Tensor> tensors;
  std::shared_ptr<Graph> graph;
  std::vector<std::shared_ptr<Graph>> graphs;
};

}  // namespace loom::ir
