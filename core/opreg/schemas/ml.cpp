// ai.onnx.ml ops ONNX 1.12 lacks: LabelEncoder-4 (keys, values and the
// default may be tensors of any of its types: keys_tensor, values_tensor,
// default_tensor, beside opset 2's typed lists) and TreeEnsemble-5.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

// Y's type is the values': values_tensor's element type, else the kind of
// values_* list given.
void infer_label_encoder(::onnx::InferenceContext& ctx) {
  int32_t type = 0;
  if (const auto* t = ctx.getAttribute("values_tensor"); t != nullptr && t->has_t()) type = t->t().data_type();
  else if (ctx.getAttribute("values_strings") != nullptr) type = ::onnx::TensorProto::STRING;
  else if (ctx.getAttribute("values_int64s") != nullptr) type = ::onnx::TensorProto::INT64;
  else if (ctx.getAttribute("values_floats") != nullptr) type = ::onnx::TensorProto::FLOAT;
  if (type != 0) ::onnx::updateOutputElemType(ctx, 0, type);
  if (input_shape(ctx, 0) != nullptr) ::onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

OpSchema label_encoder4() {
  const std::vector<std::string> types = {"tensor(string)", "tensor(int64)", "tensor(int32)", "tensor(int16)",
                                          "tensor(double)", "tensor(float)"};
  OpSchema s;
  s.SetName("LabelEncoder").SetDomain("ai.onnx.ml").SinceVersion(4).SetDoc("ONNX-ML LabelEncoder (Loom's schema)");
  s.Input(0, "X", "", "T1")
      .Output(0, "Y", "", "T2")
      .Attr("default_float", "", AttributeProto::FLOAT, -0.0f)
      .Attr("default_int64", "", AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("default_string", "", AttributeProto::STRING, std::string("_Unused"))
      .Attr("default_tensor", "", AttributeProto::TENSOR, false)
      .Attr("keys_floats", "", AttributeProto::FLOATS, false)
      .Attr("keys_int64s", "", AttributeProto::INTS, false)
      .Attr("keys_strings", "", AttributeProto::STRINGS, false)
      .Attr("keys_tensor", "", AttributeProto::TENSOR, false)
      .Attr("values_floats", "", AttributeProto::FLOATS, false)
      .Attr("values_int64s", "", AttributeProto::INTS, false)
      .Attr("values_strings", "", AttributeProto::STRINGS, false)
      .Attr("values_tensor", "", AttributeProto::TENSOR, false)
      .TypeConstraint("T1", types, "")
      .TypeConstraint("T2", types, "")
      .TypeAndShapeInferenceFunction(infer_label_encoder);
  return s;
}

// TreeEnsemble-5: X [N, F] -> Y [N, n_targets] in X's type.
OpSchema tree_ensemble5() {
  OpSchema s;
  s.SetName("TreeEnsemble").SetDomain("ai.onnx.ml").SinceVersion(5).SetDoc("ONNX-ML TreeEnsemble (Loom's schema)");
  s.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("aggregate_function", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("leaf_targetids", "", AttributeProto::INTS, true)
      .Attr("leaf_weights", "", AttributeProto::TENSOR, true)
      .Attr("membership_values", "", AttributeProto::TENSOR, false)
      .Attr("n_targets", "", AttributeProto::INT, false)
      .Attr("nodes_falseleafs", "", AttributeProto::INTS, true)
      .Attr("nodes_falsenodeids", "", AttributeProto::INTS, true)
      .Attr("nodes_featureids", "", AttributeProto::INTS, true)
      .Attr("nodes_hitrates", "", AttributeProto::TENSOR, false)
      .Attr("nodes_missing_value_tracks_true", "", AttributeProto::INTS, false)
      .Attr("nodes_modes", "", AttributeProto::TENSOR, true)
      .Attr("nodes_splits", "", AttributeProto::TENSOR, true)
      .Attr("nodes_trueleafs", "", AttributeProto::INTS, true)
      .Attr("nodes_truenodeids", "", AttributeProto::INTS, true)
      .Attr("post_transform", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("tree_roots", "", AttributeProto::INTS, true)
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        const auto* x = input_shape(ctx, 0);
        const int64_t targets = ::onnx::getAttribute(ctx, "n_targets", int64_t{-1});
        if (x != nullptr && x->dim_size() == 2) set_output_dims(ctx, 0, {x->dim(0), known_dim(targets)});
      });
  return s;
}

}  // namespace

void add_ml_schemas(SchemaList& out) {
  out.push_back(label_encoder4());
  out.push_back(tree_ensemble5());
}

}  // namespace loom::opreg
