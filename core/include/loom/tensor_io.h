// Reading and writing tensors as serialized ONNX TensorProto (.pb) files, the
// format of the ONNX backend test data and of `loom run --save-outputs`.
#pragma once

#include <string>

#include "loom/status.h"
#include "loom/tensor.h"

namespace loom {

struct NamedTensor {
  std::string name;  // TensorProto.name (may be empty)
  Tensor tensor;
};

Expected<NamedTensor> read_tensor_pb(const std::string& path);
Status write_tensor_pb(const Tensor& tensor, const std::string& name, const std::string& path);

}  // namespace loom
