// The registry's shape rules: for an op, the function that gives its
// outputs' shapes (and, for ops that compute shapes, their values) from
// what a ShapeContext knows of its inputs. Each family's file adds its
// rules to the table; an op without a rule leaves its outputs' shapes to
// ONNX's inference and the kernels.
//
// A rule assumes nothing of the model: it reads inputs and attributes
// that may be missing, of the wrong kind or out of range, and then says
// nothing (it never fails and never throws); every size it computes from
// the model is checked arithmetic.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "opreg/infer/shape_context.h"

namespace loom::opreg {

using ShapeRule = void (*)(const ir::Node& n, ShapeContext& c);
using ShapeRuleTable = std::map<std::pair<std::string, std::string>, ShapeRule>;  // (domain, op) -> rule

void add_elementwise_shape_rules(ShapeRuleTable& t);  // unary, broadcasting and variadic element-wise ops
void add_layout_shape_rules(ShapeRuleTable& t);       // Reshape, Transpose, Concat, Slice, Gather, ...
void add_value_shape_rules(ShapeRuleTable& t);        // Shape, Size, Constant, ConstantOfShape, Range
void add_nn_shape_rules(ShapeRuleTable& t);           // MatMul, Gemm, reductions, windows, recurrences
void add_selection_shape_rules(ShapeRuleTable& t);    // Split, TopK, GatherElements, Scatter*, OneHot
void add_attention_shape_rules(ShapeRuleTable& t);    // Attention, RotaryEmbedding, LayerNormalization, ...
void add_generator_shape_rules(ShapeRuleTable& t);    // Random*, EyeLike, Multinomial, window functions
void add_region_shape_rules(ShapeRuleTable& t);       // RoiAlign, NonMaxSuppression, GatherND, GridSample, losses
void add_spatial_shape_rules(ShapeRuleTable& t);      // integer convolutions, ConvTranspose, Resize, Pad, ...
void add_control_flow_shape_rules(ShapeRuleTable& t); // If, Loop, Scan (from their bodies' shapes)
void add_einsum_shape_rule(ShapeRuleTable& t);

// Types the inputs of n's body (Loop, Scan) that the model left untyped,
// from n's inputs, before the body's own inference.
void type_control_flow_bodies(const ir::Node& n, const ShapeContext& c);

// The rule for op_type of `domain` ("" for ai.onnx), or NULL.
ShapeRule find_shape_rule(const std::string& domain, const std::string& op_type);

}  // namespace loom::opreg
