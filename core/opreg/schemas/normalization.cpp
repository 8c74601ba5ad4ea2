// RMSNormalization-23 and GroupNormalization-18/21: Y has X's shape.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

OpSchema rms_normalization() {
  OpSchema s;
  s.SetName("RMSNormalization").SetDomain("").SinceVersion(23).SetDoc("ONNX RMSNormalization (Loom's schema)");
  s.Input(0, "X", "", "T")
      .Input(1, "scale", "", "V")
      .Output(0, "Y", "", "V")
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1))
      .TypeConstraint("T", float_types(), "")
      .TypeConstraint("V", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        // Y has scale's element type and X's shape.
        ::onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
        if (input_shape(ctx, 0) != nullptr) ::onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return s;
}

OpSchema group_normalization(int since) {
  OpSchema s;
  s.SetName("GroupNormalization").SetDomain("").SinceVersion(since).SetDoc("ONNX GroupNormalization (Loom's schema)");
  s.Input(0, "X", "", "T")
      .Input(1, "scale", "", "T")
      .Input(2, "bias", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
      .Attr("num_groups", "", AttributeProto::INT, true);
  if (since >= 21) s.Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1));
  s.TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) { same_type_and_shape(ctx); });
  return s;
}

}  // namespace

void add_normalization_schemas(SchemaList& out) {
  out.push_back(rms_normalization());
  out.push_back(group_normalization(18));
  out.push_back(group_normalization(21));
}

}  // namespace loom::opreg
