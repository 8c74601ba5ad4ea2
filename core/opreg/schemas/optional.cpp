// OptionalHasElement-18: the input may now be absent (false), a tensor or a
// sequence (true) as well as an optional.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::OpSchema;

OpSchema optional_has_element() {
  std::vector<std::string> types = OpSchema::all_optional_types_with_bfloat();
  for (const auto* list : {&OpSchema::all_tensor_types_with_bfloat(), &OpSchema::all_tensor_sequence_types_with_bfloat()})
    types.insert(types.end(), list->begin(), list->end());
  OpSchema s;
  s.SetName("OptionalHasElement").SetDomain("").SinceVersion(18).SetDoc("ONNX OptionalHasElement (Loom's schema)");
  s.Input(0, "input", "", "O", OpSchema::Optional)
      .Output(0, "output", "", "B")
      .TypeConstraint("O", types, "")
      .TypeConstraint("B", {"tensor(bool)"}, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::updateOutputElemType(ctx, 0, ::onnx::TensorProto::BOOL);
        set_output_dims(ctx, 0, {});  // a scalar
      });
  return s;
}

}  // namespace

void add_optional_schemas(SchemaList& out) { out.push_back(optional_has_element()); }

}  // namespace loom::opreg
