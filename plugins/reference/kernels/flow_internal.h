// Shared helpers of the sequence, optional and control-flow kernels
// (sequence.cpp, optional.cpp, control_flow.cpp): making scalar values,
// slicing a tensor along an axis into a new value, and stacking or
// concatenating tensors along an axis.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/shape.h"
#include "common/tensor_copy.h"
#include "loom/sdk.h"

namespace loom::reference::flow {

// A new int64 / bool scalar tensor value.
inline sdk::OwnedValue int64_scalar(int64_t v) {
  sdk::OwnedValue out = sdk::OwnedValue::tensor(LOOM_DTYPE_INT64, {});
  out.mutable_tensor().mutable_data<int64_t>()[0] = v;
  return out;
}
inline sdk::OwnedValue bool_scalar(bool v) {
  sdk::OwnedValue out = sdk::OwnedValue::tensor(LOOM_DTYPE_BOOL, {});
  out.mutable_tensor().mutable_data<bool>()[0] = v;
  return out;
}

// Reads a one-element tensor as a bool (any numeric type; nonzero is true).
inline bool read_bool(const sdk::ConstTensor& t, std::string_view op, std::string_view what) {
  if (!t.exists()) sdk::fail_invalid(std::string(op) + ": " + std::string(what) + " is missing");
  if (t.size() != 1)
    sdk::fail_invalid(std::string(op) + ": " + std::string(what) + " must have exactly one element, got " +
                      std::to_string(t.size()));
  if (t.dtype() == LOOM_DTYPE_BOOL) return t.data<bool>()[0];
  return t.to_int64_vector()[0] != 0;
}

// Reads a one-element integer tensor.
inline int64_t read_int_scalar(const sdk::ConstTensor& t, std::string_view op, std::string_view what) {
  if (t.size() != 1)
    sdk::fail_invalid(std::string(op) + ": " + std::string(what) + " must have exactly one element, got " +
                      std::to_string(t.size()));
  return read_indices(t, op, what)[0];
}

// The tensor inside value `v`; throws naming the op when it is not a tensor.
inline sdk::ConstTensor tensor_of(const sdk::ConstValue& v, std::string_view op, std::string_view what) {
  if (!v.exists() || !v.is_tensor()) sdk::fail_invalid(std::string(op) + ": " + std::string(what) + " must be a tensor");
  return v.tensor();
}

// Copies elements [start, start + length) along `axis` of `in` into a new
// tensor value. With keep_axis false (length must be 1) the axis is dropped.
inline sdk::OwnedValue slice_axis(const sdk::ConstTensor& in, int64_t axis, int64_t start, int64_t length,
                                  bool keep_axis, std::string_view op) {
  const Shape shape = in.shape();
  const int64_t dim = shape.at(static_cast<size_t>(axis));
  if (start < 0 || length < 0 || start + length > dim)
    sdk::fail_invalid(std::string(op) + ": slice [" + std::to_string(start) + ", " + std::to_string(start + length) +
                      ") out of range for axis " + std::to_string(axis) + " of size " + std::to_string(dim));
  Shape out_shape = shape;
  if (keep_axis) {
    out_shape[static_cast<size_t>(axis)] = length;
  } else {
    out_shape.erase(out_shape.begin() + axis);
  }
  sdk::OwnedValue out = sdk::OwnedValue::tensor(in.dtype(), out_shape);
  const sdk::Tensor t = out.mutable_tensor();
  const int64_t outer = dims_product(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(shape, static_cast<size_t>(axis) + 1, shape.size());
  if (outer * length * inner == 0) return out;
  ElementCopier c(in, t, op);
  for (int64_t o = 0; o < outer; ++o) c.copy(o * length * inner, (o * dim + start) * inner, length * inner);
  return out;
}

// Concatenates `parts` (same dtype and rank; equal dims except `axis`) along
// `axis` into `out`, whose shape the caller computed. With `stack` true the
// parts all have the same shape and are stacked along a new axis `axis`
// (which then indexes out's shape, not the parts').
inline void concat_into(const std::vector<sdk::ConstTensor>& parts, int64_t axis, bool stack, const sdk::Tensor& out,
                        std::string_view op) {
  const Shape out_shape = out.shape();
  const int64_t outer = dims_product(out_shape, 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(out_shape, static_cast<size_t>(axis) + 1, out_shape.size());
  const int64_t out_chunk = out_shape[static_cast<size_t>(axis)] * inner;
  int64_t offset = 0;
  for (const sdk::ConstTensor& p : parts) {
    const int64_t len = stack ? 1 : p.shape()[static_cast<size_t>(axis)];
    const int64_t chunk = len * inner;
    if (outer * chunk > 0) {
      ElementCopier c(p, out, op);
      for (int64_t o = 0; o < outer; ++o) c.copy(o * out_chunk + offset, o * chunk, chunk);
    }
    offset += chunk;
  }
}

// Checks that every part has the same dtype and shape (for stacking) or the
// same shape except `axis` (for concatenation); returns the output shape.
inline Shape concat_shape(const std::vector<sdk::ConstTensor>& parts, int64_t axis, bool stack, std::string_view op) {
  if (parts.empty()) sdk::fail_invalid(std::string(op) + ": nothing to concatenate");
  const Shape first = parts[0].shape();
  const int32_t dtype = parts[0].dtype();
  Shape out = first;
  if (stack) out.insert(out.begin() + axis, 0);
  for (size_t i = 0; i < parts.size(); ++i) {
    const Shape s = parts[i].shape();
    if (parts[i].dtype() != dtype)
      sdk::fail_invalid(std::string(op) + ": element " + std::to_string(i) + " has type " +
                        sdk::dtype_name(parts[i].dtype()) + ", element 0 has " + sdk::dtype_name(dtype));
    bool ok = s.size() == first.size();
    for (size_t d = 0; ok && d < s.size(); ++d)
      if (s[d] != first[d] && (stack || static_cast<int64_t>(d) != axis)) ok = false;
    if (!ok)
      sdk::fail_invalid(std::string(op) + ": element " + std::to_string(i) + " has shape " + shape_string(s) +
                        ", incompatible with element 0's " + shape_string(first));
    if (stack) ++out[static_cast<size_t>(axis)];
    else if (i > 0) out[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
  }
  return out;
}

// Stacks `parts` along a new axis `axis` into a new tensor value.
inline sdk::OwnedValue stack_value(const std::vector<sdk::ConstTensor>& parts, int64_t axis, std::string_view op) {
  const Shape shape = concat_shape(parts, axis, true, op);
  sdk::OwnedValue out = sdk::OwnedValue::tensor(parts[0].dtype(), shape);
  concat_into(parts, axis, true, out.mutable_tensor(), op);
  return out;
}

// A copy of sequence `seq` (element type `dtype`) with its elements
// [0, n) in the given order: indices[i] < 0 means "insert `extra` here".
inline sdk::OwnedValue rebuild_sequence(const sdk::ConstValue& seq, int32_t dtype, const std::vector<int64_t>& order,
                                        const sdk::ConstValue& extra) {
  sdk::OwnedValue out = sdk::OwnedValue::sequence(dtype);
  for (int64_t i : order) out.append(sdk::OwnedValue::clone(i < 0 ? extra : seq.at(static_cast<size_t>(i))));
  return out;
}

// Number of outputs of graph attribute `attr` of the node.
inline size_t subgraph_output_count(const sdk::Node& node, std::string_view attr) {
  const LOOM_GraphView* g = node.attr_graph(attr);
  if (g == nullptr)
    sdk::fail_invalid(std::string(node.op_type()) + ": missing graph attribute '" + std::string(attr) + "'");
  return sdk::Graph(g).output_count();
}
inline size_t subgraph_input_count(const sdk::Node& node, std::string_view attr) {
  const LOOM_GraphView* g = node.attr_graph(attr);
  if (g == nullptr)
    sdk::fail_invalid(std::string(node.op_type()) + ": missing graph attribute '" + std::string(attr) + "'");
  return sdk::Graph(g).input_count();
}

}  // namespace loom::reference::flow
