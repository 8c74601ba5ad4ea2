// String ops of opset 20: StringConcat (broadcasting), StringSplit (pieces
// padded to the longest split, plus their counts) and RegexFullMatch.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

OpSchema string_concat() {
  OpSchema s;
  s.SetName("StringConcat").SetDomain("").SinceVersion(20).SetDoc("ONNX StringConcat (Loom's schema)");
  s.Input(0, "X", "", "T")
      .Input(1, "Y", "", "T")
      .Output(0, "Z", "", "T")
      .TypeConstraint("T", {"tensor(string)"}, "")
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

OpSchema string_split() {
  OpSchema s;
  s.SetName("StringSplit").SetDomain("").SinceVersion(20).SetDoc("ONNX StringSplit (Loom's schema)");
  s.Input(0, "X", "", "T1")
      .Output(0, "Y", "", "T2")
      .Output(1, "Z", "", "T3")
      .Attr("delimiter", "", AttributeProto::STRING, false)
      .Attr("maxsplit", "", AttributeProto::INT, false)
      .TypeConstraint("T1", {"tensor(string)"}, "")
      .TypeConstraint("T2", {"tensor(string)"}, "")
      .TypeConstraint("T3", {"tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::updateOutputElemType(ctx, 0, ::onnx::TensorProto::STRING);
        ::onnx::updateOutputElemType(ctx, 1, ::onnx::TensorProto::INT64);
        const auto* in = input_shape(ctx, 0);
        if (in == nullptr) return;
        std::vector<::onnx::TensorShapeProto::Dimension> dims(in->dim().begin(), in->dim().end());
        set_output_dims(ctx, 1, dims);
        dims.emplace_back();  // the most pieces: known only from the data
        set_output_dims(ctx, 0, dims);
      });
  return s;
}

OpSchema regex_full_match() {
  OpSchema s;
  s.SetName("RegexFullMatch").SetDomain("").SinceVersion(20).SetDoc("ONNX RegexFullMatch (Loom's schema)");
  s.Input(0, "X", "", "T1")
      .Output(0, "Y", "", "T2")
      .Attr("pattern", "", AttributeProto::STRING, false)
      .TypeConstraint("T1", {"tensor(string)"}, "")
      .TypeConstraint("T2", {"tensor(bool)"}, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::updateOutputElemType(ctx, 0, ::onnx::TensorProto::BOOL);
        if (input_shape(ctx, 0) != nullptr) ::onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return s;
}

}  // namespace

void add_text_schemas(SchemaList& out) {
  out.push_back(string_concat());
  out.push_back(string_split());
  out.push_back(regex_full_match());
}

}  // namespace loom::opreg
