// Pieces the type-and-shape functions of Loom's schema table share. They
// run inside ONNX's shape inference (in the inference server, isolated
// from the caller: isolated_inference.h), so a contradiction in the model
// is reported with fail_shape_inference (an exception ONNX's inference
// turns into "less is known"), never by reading past a shape.
#pragma once

#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::opreg {

// Type strings of the common constraint sets.
const std::vector<std::string>& float_types();    // float16, float, double, bfloat16
const std::vector<std::string>& integer_types();  // (u)int8..64

// Input i's shape when it has one (NULL for an absent or unranked input).
const ::onnx::TensorShapeProto* input_shape(::onnx::InferenceContext& ctx, size_t i);

// Output `out` gets input `in`'s element type and shape (where known).
void same_type_and_shape(::onnx::InferenceContext& ctx, size_t in = 0, size_t out = 0);

// The int64/int32 values of constant input i (an initializer or a small
// constant the inference was given), or nullopt when it is not known.
std::optional<std::vector<int64_t>> constant_ints(::onnx::InferenceContext& ctx, size_t i);

// Sets output `out`'s shape to `dims`: a value >= 0 is fixed, -1 unknown.
void set_output_dims(::onnx::InferenceContext& ctx, size_t out, const std::vector<::onnx::TensorShapeProto::Dimension>& dims);

::onnx::TensorShapeProto::Dimension known_dim(int64_t v);

}  // namespace loom::opreg
