// QuantizeLinear / DequantizeLinear 19 and 21: 19 lets DequantizeLinear's
// output take the scale's type (float16, bfloat16) and adds saturate; 21
// adds blocked quantization (block_size), 16-bit integers and
// QuantizeLinear's output_dtype. (The float8 / 4-bit types those versions
// also allow have no name in ONNX 1.12's library; they are left out of the
// constraints here until Loom's element types cover them.)
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

std::vector<std::string> quantized_types(int since) {
  std::vector<std::string> t = {"tensor(int8)", "tensor(uint8)"};
  if (since >= 21) t.insert(t.end(), {"tensor(int16)", "tensor(uint16)"});
  return t;
}

std::vector<std::string> scale_types() {
  std::vector<std::string> t = float_types();
  t.push_back("tensor(int32)");
  return t;
}

OpSchema quantize_linear(int since) {
  OpSchema s;
  s.SetName("QuantizeLinear").SetDomain("").SinceVersion(since).SetDoc("ONNX QuantizeLinear (Loom's schema)");
  s.Input(0, "x", "", "T1")
      .Input(1, "y_scale", "", "T2")
      .Input(2, "y_zero_point", "", "T3", OpSchema::Optional)
      .Output(0, "y", "", "T3")
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("saturate", "", AttributeProto::INT, static_cast<int64_t>(1));
  if (since >= 21) {
    s.Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(0));
    s.Attr("output_dtype", "", AttributeProto::INT, static_cast<int64_t>(0));
  }
  s.TypeConstraint("T1", scale_types(), "")
      .TypeConstraint("T2", scale_types(), "")
      .TypeConstraint("T3", quantized_types(since), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        // y's type: the zero point's, else output_dtype, else uint8.
        if (ctx.getNumInputs() > 2 && ctx.getInputType(2) != nullptr) {
          ::onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
        } else {
          const int64_t t = ::onnx::getAttribute(ctx, "output_dtype", int64_t{0});
          ::onnx::updateOutputElemType(ctx, 0, t != 0 ? static_cast<int32_t>(t) : ::onnx::TensorProto::UINT8);
        }
        if (input_shape(ctx, 0) != nullptr) ::onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return s;
}

OpSchema dequantize_linear(int since) {
  OpSchema s;
  s.SetName("DequantizeLinear").SetDomain("").SinceVersion(since).SetDoc("ONNX DequantizeLinear (Loom's schema)");
  std::vector<std::string> in_types = quantized_types(since);
  in_types.push_back("tensor(int32)");
  s.Input(0, "x", "", "T1")
      .Input(1, "x_scale", "", "T2")
      .Input(2, "x_zero_point", "", "T1", OpSchema::Optional)
      .Output(0, "y", "", "T2")
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(1));
  if (since >= 21) s.Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(0));
  s.TypeConstraint("T1", in_types, "")
      .TypeConstraint("T2", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);  // the scale's type
        if (input_shape(ctx, 0) != nullptr) ::onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return s;
}

}  // namespace

void add_quantization_schemas(SchemaList& out) {
  for (int since : {19, 21}) {
    // Versions 23 to 25 add attributes (output_dtype on DequantizeLinear,
    // precision on QuantizeLinear) along with their new element types;
    // until the table has those versions, the newest one here serves them
    // without refusing the attributes it does not know.
    OpSchema q = quantize_linear(since), dq = dequantize_linear(since);
    if (since == 21) {
      q.AllowUncheckedAttributes();
      dq.AllowUncheckedAttributes();
    }
    out.push_back(std::move(q));
    out.push_back(std::move(dq));
  }
}

}  // namespace loom::opreg
