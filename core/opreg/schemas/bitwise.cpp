// BitwiseAnd/Or/Xor-18 (broadcasting), BitwiseNot-18 and BitCast-26
// (reinterprets each element's bits as another type of the same width).
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

OpSchema bitwise_binary(const char* name) {
  OpSchema s;
  s.SetName(name).SetDomain("").SinceVersion(18).SetDoc("ONNX bitwise op (Loom's schema)");
  s.Input(0, "A", "", "T")
      .Input(1, "B", "", "T")
      .Output(0, "C", "", "T")
      .TypeConstraint("T", integer_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        const auto* a = input_shape(ctx, 0);
        const auto* b = input_shape(ctx, 1);
        if (a != nullptr && b != nullptr)
          ::onnx::bidirectionalBroadcastShapeInference(
              *a, *b, *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
      });
  return s;
}

const std::vector<std::string>& bitcast_types() {
  static const std::vector<std::string> kTypes = [] {
    std::vector<std::string> t = integer_types();
    for (const std::string& f : float_types()) t.push_back(f);
    t.push_back("tensor(bool)");
    return t;
  }();
  return kTypes;
}

OpSchema bitcast() {
  OpSchema s;
  s.SetName("BitCast").SetDomain("").SinceVersion(26).SetDoc("ONNX BitCast (Loom's schema)");
  s.Input(0, "input", "", "T1")
      .Output(0, "output", "", "T2")
      .Attr("to", "the output's element type (same bit width as the input's)", AttributeProto::INT, true)
      .TypeConstraint("T1", bitcast_types(), "")
      .TypeConstraint("T2", bitcast_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::propagateElemTypeFromAttributeToOutput(ctx, "to", 0);
        if (input_shape(ctx, 0) != nullptr) ::onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return s;
}

}  // namespace

void add_bitwise_schemas(SchemaList& out) {
  for (const char* name : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) out.push_back(bitwise_binary(name));
  OpSchema bitwise_not;
  bitwise_not.SetName("BitwiseNot").SetDomain("").SinceVersion(18).SetDoc("ONNX BitwiseNot (Loom's schema)");
  bitwise_not.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", integer_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) { same_type_and_shape(ctx); });
  out.push_back(std::move(bitwise_not));
  out.push_back(bitcast());
}

}  // namespace loom::opreg
