// DFT-20: DFT-17 with the axis moved from an attribute to an optional
// scalar input (default -2, counted from the back).
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;
using Dim = ::onnx::TensorShapeProto::Dimension;

// Like the input, with the transformed axis n (or n/2 + 1 when onesided and
// forward) long and the last dim 2 (1 for the inverse real transform). The
// axis and length must be constants to be known; otherwise only the rank.
void infer_dft(::onnx::InferenceContext& ctx) {
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* in = input_shape(ctx, 0);
  if (in == nullptr) return;
  const int rank = in->dim_size();
  if (rank < 2) fail_shape_inference("DFT: input must have rank >= 2, got ", rank);
  const bool inverse = ::onnx::getAttribute(ctx, "inverse", int64_t{0}) != 0;
  const bool onesided = ::onnx::getAttribute(ctx, "onesided", int64_t{0}) != 0;
  std::vector<Dim> dims(in->dim().begin(), in->dim().end());
  dims.back() = known_dim(inverse && onesided ? 1 : 2);
  const bool has_axis = ctx.getNumInputs() > 2 && ctx.getInputType(2) != nullptr;
  const auto axis_value = has_axis ? constant_ints(ctx, 2) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{-2});
  const bool has_length = ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr;
  const auto length = has_length ? constant_ints(ctx, 1) : std::nullopt;
  if (!axis_value || axis_value->size() != 1) {
    for (int i = 0; i + 1 < rank; ++i) dims[static_cast<size_t>(i)] = Dim();  // which one changes is unknown
    set_output_dims(ctx, 0, dims);
    return;
  }
  int64_t axis = (*axis_value)[0];
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank - 2) fail_shape_inference("DFT: axis ", (*axis_value)[0], " out of range for rank ", rank);
  Dim& d = dims[static_cast<size_t>(axis)];
  int64_t n = -1;
  if (has_length) {
    if (length && length->size() == 1) n = (*length)[0];
  } else if (in->dim(static_cast<int>(axis)).has_dim_value()) {
    const int64_t n_in = in->dim(static_cast<int>(axis)).dim_value();
    n = inverse && onesided ? 2 * (n_in - 1) : n_in;
  }
  d = n < 1 ? Dim() : known_dim(onesided && !inverse ? n / 2 + 1 : n);
  set_output_dims(ctx, 0, dims);
}

OpSchema dft20() {
  OpSchema s;
  s.SetName("DFT").SetDomain("").SinceVersion(20).SetDoc("ONNX DFT (Loom's schema)");
  s.Input(0, "input", "", "T1")
      .Input(1, "dft_length", "", "T2", OpSchema::Optional)
      .Input(2, "axis", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "output", "", "T1")
      .Attr("inverse", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("onesided", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T1", float_types(), "")
      .TypeConstraint("T2", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(infer_dft);
  return s;
}

}  // namespace

void add_signal_schemas(SchemaList& out) { out.push_back(dft20()); }

}  // namespace loom::opreg
