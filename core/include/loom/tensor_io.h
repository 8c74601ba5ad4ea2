// Reading and writing tensors as serialized ONNX TensorProto (.pb) files, the
// format of the ONNX backend test data and of `loom run --save-outputs`, and
// as NumPy .npy files.
#pragma once

#include <string>

#include "loom/status.h"
#include "loom/tensor.h"
#include "loom/value.h"

namespace loom {

struct NamedTensor {
  std::string name;  // TensorProto.name (may be empty)
  Tensor tensor;
};

Expected<NamedTensor> read_tensor_pb(const std::string& path);
Status write_tensor_pb(const Tensor& tensor, const std::string& name, const std::string& path);

// Values of any kind: `kind` says which proto the file holds — TensorProto
// (kTensor), SequenceProto (kSequence, of tensors or of maps), OptionalProto
// (kOptional; an empty optional reads as Value::none()) or MapProto (kMap:
// int64 or string keys, a scalar per key, as onnx.numpy_helper.from_dict
// writes it). kUnknown tries the first three in that order; since
// the three protos share field numbers, an OptionalProto holding a tensor is
// byte-for-byte a one-element SequenceProto and reads as a sequence then.
// An empty sequence's element type is not in the file: it reads as
// kUndefined, and callers fill it from the model's declaration.
Expected<Value> read_value_pb(const std::string& path, ValueKind kind);
Status write_value_pb(const Value& value, ValueKind kind, const std::string& name, const std::string& path);

// NumPy .npy (format 1.0-3.0, C order, little-endian or single-byte types:
// float16/32/64, int8-64, uint8-64, bool). Fortran order, big-endian,
// structured and object arrays are refused naming the file; so is a data
// size that does not match the header's shape.
Expected<Tensor> read_tensor_npy(const std::string& path);
Status write_tensor_npy(const Tensor& tensor, const std::string& path);

}  // namespace loom
