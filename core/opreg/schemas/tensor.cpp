// Tensor ops ONNX added after opset 17: CumProd-26, TensorScatter-24 (a KV
// cache write) and CenterCropPad-18.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;
using Dim = ::onnx::TensorShapeProto::Dimension;

OpSchema cumprod() {
  OpSchema s;
  s.SetName("CumProd").SetDomain("").SinceVersion(26).SetDoc("ONNX CumProd (Loom's schema)");
  std::vector<std::string> types = float_types();
  for (const char* t : {"tensor(int32)", "tensor(int64)", "tensor(uint32)", "tensor(uint64)"}) types.push_back(t);
  s.Input(0, "x", "", "T")
      .Input(1, "axis", "", "T2")
      .Output(0, "y", "", "T")
      .Attr("exclusive", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("reverse", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T", types, "")
      .TypeConstraint("T2", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) { same_type_and_shape(ctx); });
  return s;
}

OpSchema tensor_scatter() {
  OpSchema s;
  s.SetName("TensorScatter").SetDomain("").SinceVersion(24).SetDoc("ONNX TensorScatter (Loom's schema)");
  std::vector<std::string> types = float_types();
  for (const std::string& t : integer_types()) types.push_back(t);
  types.push_back("tensor(bool)");
  s.Input(0, "past_cache", "", "T")
      .Input(1, "update", "", "T")
      .Input(2, "write_indices", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "present_cache", "", "T")
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(-2))
      .Attr("mode", "'linear' or 'circular'", AttributeProto::STRING, std::string("linear"))
      .TypeConstraint("T", types, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) { same_type_and_shape(ctx); });
  return s;
}

// The output has the input's rank; each axis in `axes` (all by default)
// takes its size from `shape`, the others keep the input's.
void infer_center_crop_pad(::onnx::InferenceContext& ctx) {
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* in = input_shape(ctx, 0);
  if (in == nullptr) return;
  const int rank = in->dim_size();
  std::vector<int64_t> axes;
  if (!::onnx::getRepeatedAttribute(ctx, "axes", axes))
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  std::vector<Dim> dims(in->dim().begin(), in->dim().end());
  const auto sizes = constant_ints(ctx, 1);
  if (sizes && sizes->size() != axes.size())
    fail_shape_inference("CenterCropPad: 'shape' has ", sizes->size(), " values for ", axes.size(), " axes");
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank) fail_shape_inference("CenterCropPad: axis ", axes[k], " out of range for rank ", rank);
    dims[static_cast<size_t>(a)] = sizes ? known_dim((*sizes)[k]) : Dim();
  }
  set_output_dims(ctx, 0, dims);
}

OpSchema center_crop_pad() {
  OpSchema s;
  s.SetName("CenterCropPad").SetDomain("").SinceVersion(18).SetDoc("ONNX CenterCropPad (Loom's schema)");
  s.Input(0, "input_data", "", "T")
      .Input(1, "shape", "", "Tind")
      .Output(0, "output_data", "", "T")
      .Attr("axes", "", AttributeProto::INTS, false)
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(infer_center_crop_pad);
  return s;
}

}  // namespace

void add_tensor_schemas(SchemaList& out) {
  out.push_back(cumprod());
  out.push_back(tensor_scatter());
  out.push_back(center_crop_pad());
}

}  // namespace loom::opreg
