// Model inputs for `loom run`: read from .pb files or made up, for tensor,
// sequence and optional inputs alike.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "loom/session.h"
#include "loom/value.h"

namespace loom::tools {

// Reads `path` as the proto `info.kind` calls for (TensorProto, SequenceProto,
// OptionalProto) and checks its element type against `info.dtype`.
// The ONNX backend test data stores bfloat16 as uint16 bit patterns (numpy
// has no bfloat16): a uint16 tensor fed to a bfloat16 input is taken as such.
// An empty sequence gets the declared element type. Errors name the path.
Expected<Value> read_input_value(const ValueInfo& info, const std::string& path);

// A random value of `info`'s kind whose tensors have `dims`: a tensor; a
// sequence of two tensors; an optional holding a tensor.
Expected<Value> random_input_value(const ValueInfo& info, const Dims& dims, std::mt19937_64& rng);

}  // namespace loom::tools
