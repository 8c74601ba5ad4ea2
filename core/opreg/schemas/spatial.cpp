// Spatial ops ONNX added or changed after opset 17: Col2Im-18 (the inverse
// of im2col, summing overlapping blocks), AffineGrid-20 (the sampling grid
// of a batch of affine transforms), GridSample-20/22 (any rank) and
// DeformConv-19/22.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;
using Dim = ::onnx::TensorShapeProto::Dimension;

// input [N, C * prod(block_shape), L] -> [N, C, *image_shape].
void infer_col2im(::onnx::InferenceContext& ctx) {
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* in = input_shape(ctx, 0);
  const auto image = constant_ints(ctx, 1);
  const auto block = constant_ints(ctx, 2);
  if (in == nullptr || !image) return;
  if (in->dim_size() != 3) fail_shape_inference("Col2Im: input must have rank 3, got ", in->dim_size());
  Dim channels;
  if (block && in->dim(1).has_dim_value()) {
    int64_t b = 1;
    for (int64_t v : *block) {
      if (v <= 0 || __builtin_mul_overflow(b, v, &b)) fail_shape_inference("Col2Im: invalid block_shape");
    }
    if (in->dim(1).dim_value() % b != 0)
      fail_shape_inference("Col2Im: input dim 1 (", in->dim(1).dim_value(), ") is not a multiple of the block size ", b);
    channels = known_dim(in->dim(1).dim_value() / b);
  }
  std::vector<Dim> dims = {in->dim(0), channels};
  for (int64_t v : *image) dims.push_back(known_dim(v));
  set_output_dims(ctx, 0, dims);
}

OpSchema col2im() {
  OpSchema s;
  s.SetName("Col2Im").SetDomain("").SinceVersion(18).SetDoc("ONNX Col2Im (Loom's schema)");
  s.Input(0, "input", "", "T")
      .Input(1, "image_shape", "", "tensor(int64)")
      .Input(2, "block_shape", "", "tensor(int64)")
      .Output(0, "output", "", "T")
      .Attr("dilations", "", AttributeProto::INTS, false)
      .Attr("pads", "", AttributeProto::INTS, false)
      .Attr("strides", "", AttributeProto::INTS, false)
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeAndShapeInferenceFunction(infer_col2im);
  return s;
}

// theta [N, 2, 3] with size [N, C, H, W] -> grid [N, H, W, 2];
// theta [N, 3, 4] with size [N, C, D, H, W] -> grid [N, D, H, W, 3].
void infer_affine_grid(::onnx::InferenceContext& ctx) {
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto size = constant_ints(ctx, 1);
  if (!size) {
    // The rank alone: from size's length, when its shape is known.
    const auto* s = input_shape(ctx, 1);
    if (s == nullptr || s->dim_size() != 1 || !s->dim(0).has_dim_value()) return;
    const int64_t n = s->dim(0).dim_value();
    if (n != 4 && n != 5) fail_shape_inference("AffineGrid: size must have 4 or 5 values, got ", n);
    set_output_dims(ctx, 0, std::vector<Dim>(static_cast<size_t>(n), Dim()));
    return;
  }
  if (size->size() != 4 && size->size() != 5)
    fail_shape_inference("AffineGrid: size must have 4 or 5 values, got ", size->size());
  std::vector<Dim> dims = {known_dim((*size)[0])};
  for (size_t i = 2; i < size->size(); ++i) dims.push_back(known_dim((*size)[i]));
  dims.push_back(known_dim(static_cast<int64_t>(size->size()) - 2));
  set_output_dims(ctx, 0, dims);
}

OpSchema affine_grid() {
  OpSchema s;
  s.SetName("AffineGrid").SetDomain("").SinceVersion(20).SetDoc("ONNX AffineGrid (Loom's schema)");
  s.Input(0, "theta", "", "T1")
      .Input(1, "size", "", "T2")
      .Output(0, "grid", "", "T1")
      .Attr("align_corners", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T1", float_types(), "")
      .TypeConstraint("T2", {"tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(infer_affine_grid);
  return s;
}

// X [N, C, D1..Dr] sampled at grid [N, D1_out..Dr_out, r] -> Y [N, C,
// D1_out..Dr_out] (GridSample-20 generalises 16's 4-D to any rank).
void infer_grid_sample(::onnx::InferenceContext& ctx) {
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* x = input_shape(ctx, 0);
  const auto* grid = input_shape(ctx, 1);
  if (x == nullptr || grid == nullptr) return;
  if (x->dim_size() < 3 || grid->dim_size() != x->dim_size())
    fail_shape_inference("GridSample: X and grid must have the same rank (at least 3)");
  std::vector<Dim> dims = {x->dim(0), x->dim(1)};
  for (int i = 1; i + 1 < grid->dim_size(); ++i) dims.push_back(grid->dim(i));
  set_output_dims(ctx, 0, dims);
}

OpSchema grid_sample(int since) {
  OpSchema s;
  s.SetName("GridSample").SetDomain("").SinceVersion(since).SetDoc("ONNX GridSample (Loom's schema)");
  s.Input(0, "X", "", "T1")
      .Input(1, "grid", "", "T2")
      .Output(0, "Y", "", "T1")
      .Attr("align_corners", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("mode", "linear, nearest or cubic", AttributeProto::STRING, std::string("linear"))
      .Attr("padding_mode", "zeros, border or reflection", AttributeProto::STRING, std::string("zeros"))
      .TypeConstraint("T1", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeConstraint("T2", float_types(), "")
      .TypeAndShapeInferenceFunction(infer_grid_sample);
  return s;
}

// X [N, C, H, W] -> Y [N, oC, oH, oW]: oC from W, the spatial dims from
// offset's (which the geometry must match; the kernel checks it).
void infer_deform_conv(::onnx::InferenceContext& ctx) {
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* x = input_shape(ctx, 0);
  const auto* w = input_shape(ctx, 1);
  const auto* off = input_shape(ctx, 2);
  if (x == nullptr || w == nullptr || off == nullptr) return;
  if (x->dim_size() < 3 || w->dim_size() != x->dim_size() || off->dim_size() != x->dim_size())
    fail_shape_inference("DeformConv: X, W and offset must have the same rank (at least 3)");
  std::vector<Dim> dims = {x->dim(0), w->dim(0)};
  for (int i = 2; i < off->dim_size(); ++i) dims.push_back(off->dim(i));
  set_output_dims(ctx, 0, dims);
}

OpSchema deform_conv(int since) {
  OpSchema s;
  s.SetName("DeformConv").SetDomain("").SinceVersion(since).SetDoc("ONNX DeformConv (Loom's schema)");
  s.Input(0, "X", "", "T")
      .Input(1, "W", "", "T")
      .Input(2, "offset", "", "T")
      .Input(3, "B", "", "T", OpSchema::Optional)
      .Input(4, "mask", "", "T", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .Attr("dilations", "", AttributeProto::INTS, false)
      .Attr("group", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("kernel_shape", "", AttributeProto::INTS, false)
      .Attr("offset_group", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("pads", "", AttributeProto::INTS, false)
      .Attr("strides", "", AttributeProto::INTS, false)
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction(infer_deform_conv);
  return s;
}

}  // namespace

void add_spatial_schemas(SchemaList& out) {
  out.push_back(deform_conv(19));
  out.push_back(deform_conv(22));
  out.push_back(col2im());
  out.push_back(affine_grid());
  out.push_back(grid_sample(20));
  out.push_back(grid_sample(22));
}

}  // namespace loom::opreg
