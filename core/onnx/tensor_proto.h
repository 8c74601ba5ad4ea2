// Conversion between ONNX TensorProto messages and loom::Tensor.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "loom/status.h"
#include "loom/tensor.h"

namespace loom::onnxio {

// Rank limit for tensors read from a model or a .pb file; deeper shapes are
// refused before anything is allocated.
constexpr size_t kMaxTensorRank = 64;

// Builds a Tensor from `proto`. Accepts every ONNX data type from float (1) to
// bfloat16 (16), with the data in raw_data (little-endian), in the typed field
// the ONNX spec assigns to the type, or in an external file.
//
// External data (data_location == EXTERNAL, keys "location", "offset",
// "length") is read from `model_dir`/location. The location is refused when it
// is absolute, when it leaves `model_dir` once ".." and symlinks are resolved,
// when the file is missing, or when offset/length lie outside the file.
// An empty `model_dir` means the folder is unknown (e.g. a model given as
// bytes): external data is then refused.
//
// Shape and data size are validated before anything large is allocated: dims
// non-negative, rank <= kMaxTensorRank, element count within int64, data size
// equal to count x element size. Errors name the tensor (proto.name()).
//
// `max_bytes` > 0 refuses a tensor whose data would take more (config
// limits.max_tensor_mb), before allocating it.
Expected<Tensor> tensor_from_proto(const ::onnx::TensorProto& proto, const std::string& model_dir,
                                   int64_t max_bytes = 0);
// The same, but a raw_data tensor takes its bytes out of `proto` (left
// without its raw_data) instead of copying them: for loading a model, whose
// protobuf is dropped after conversion.
Expected<Tensor> take_tensor_from_proto(::onnx::TensorProto& proto, const std::string& model_dir,
                                        int64_t max_bytes = 0);

// "limits.<key> (N MiB)" style text for limit errors.
std::string describe_byte_limit(const char* key, int64_t bytes);

// Serializes `t` as a TensorProto named `name`: raw_data for fixed-size types,
// string_data for strings.
::onnx::TensorProto tensor_to_proto(const Tensor& t, const std::string& name);

}  // namespace loom::onnxio
