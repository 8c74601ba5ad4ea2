// Elementwise activations ONNX added after opset 17: Gelu-20, Mish-18/22
// (22 only widens the types), Swish-24 (Y has X's type and shape) and
// SwiGLU-28 (two inputs, broadcasting).
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

OpSchema unary(const char* name, int since) {
  OpSchema s;
  s.SetName(name).SetDomain("").SinceVersion(since).SetDoc("ONNX activation (Loom's schema)");
  s.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) { same_type_and_shape(ctx); });
  return s;
}

}  // namespace

void add_activation_schemas(SchemaList& out) {
  OpSchema gelu = unary("Gelu", 20);
  gelu.Attr("approximate", "'none' or 'tanh'", AttributeProto::STRING, std::string("none"));
  out.push_back(std::move(gelu));
  out.push_back(unary("Mish", 18));
  out.push_back(unary("Mish", 22));
  OpSchema swish = unary("Swish", 24);
  swish.Attr("alpha", "x * sigmoid(alpha * x)", AttributeProto::FLOAT, 1.0f);
  out.push_back(std::move(swish));
  // SwiGLU-28: Swish(a, alpha) * b, broadcasting.
  OpSchema swiglu;
  swiglu.SetName("SwiGLU").SetDomain("").SinceVersion(28).SetDoc("ONNX SwiGLU (Loom's schema)");
  swiglu.Input(0, "a", "", "T")
      .Input(1, "b", "", "T")
      .Output(0, "y", "", "T")
      .Attr("alpha", "a * sigmoid(alpha * a) * b", AttributeProto::FLOAT, 1.0f)
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        const auto* a = input_shape(ctx, 0);
        const auto* b = input_shape(ctx, 1);
        if (a != nullptr && b != nullptr)
          ::onnx::bidirectionalBroadcastShapeInference(
              *a, *b, *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
      });
  out.push_back(std::move(swiglu));
}

}  // namespace loom::opreg
