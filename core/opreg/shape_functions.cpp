#include "opreg/shape_functions.h"

#include <onnx/defs/tensor_proto_util.h>

namespace loom::opreg {

const std::vector<std::string>& float_types() {
  static const std::vector<std::string> kTypes = {"tensor(float16)", "tensor(float)", "tensor(double)",
                                                  "tensor(bfloat16)"};
  return kTypes;
}

const std::vector<std::string>& integer_types() {
  static const std::vector<std::string> kTypes = {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)",
                                                  "tensor(uint64)", "tensor(int8)",  "tensor(int16)",
                                                  "tensor(int32)", "tensor(int64)"};
  return kTypes;
}

const ::onnx::TensorShapeProto* input_shape(::onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return nullptr;
  const ::onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return nullptr;
  return &t->tensor_type().shape();
}

void same_type_and_shape(::onnx::InferenceContext& ctx, size_t in, size_t out) {
  if (in >= ctx.getNumInputs() || ctx.getInputType(in) == nullptr) return;
  ::onnx::propagateElemTypeFromInputToOutput(ctx, in, out);
  if (input_shape(ctx, in) != nullptr) ::onnx::propagateShapeFromInputToOutput(ctx, in, out);
}

std::optional<std::vector<int64_t>> constant_ints(::onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return std::nullopt;
  const ::onnx::TensorProto* data = ctx.getInputData(i);
  if (data == nullptr) return std::nullopt;
  if (data->data_type() == ::onnx::TensorProto::INT64) return ::onnx::ParseData<int64_t>(data);
  if (data->data_type() == ::onnx::TensorProto::INT32) {
    const std::vector<int32_t> v = ::onnx::ParseData<int32_t>(data);
    return std::vector<int64_t>(v.begin(), v.end());
  }
  return std::nullopt;
}

::onnx::TensorShapeProto::Dimension known_dim(int64_t v) {
  ::onnx::TensorShapeProto::Dimension d;
  if (v >= 0) d.set_dim_value(v);
  return d;
}

void set_output_dims(::onnx::InferenceContext& ctx, size_t out,
                     const std::vector<::onnx::TensorShapeProto::Dimension>& dims) {
  if (out >= ctx.getNumOutputs()) return;
  auto* shape = ctx.getOutputType(out)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (const auto& d : dims) *shape->add_dim() = d;
}

}  // namespace loom::opreg
