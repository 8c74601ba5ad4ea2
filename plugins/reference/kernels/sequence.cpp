// Sequence kernels: SequenceConstruct, SequenceEmpty, SequenceAt,
// SequenceInsert, SequenceErase, SequenceLength, SplitToSequence and
// ConcatFromSequence (opset 11+). Sequences are host values; a kernel that
// "modifies" one builds a new sequence from copies of the elements.
#include <algorithm>
#include <numeric>
#include <optional>

#include "kernel_families.h"
#include "kernels/flow_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstValue;
using sdk::KernelContext;
using sdk::OwnedValue;

constexpr int kOpen = LOOM_OPSET_OPEN_END;

ConstValue sequence_input(const KernelContext& ctx, size_t i, const char* op) {
  const ConstValue v = ctx.input_value(i);
  if (!v.exists() || !v.is_sequence())
    sdk::fail_invalid(std::string(op) + ": input " + std::to_string(i) + " must be a sequence");
  return v;
}

// Element type of a sequence that receives a tensor of type `dtype`.
int32_t checked_elem_dtype(const ConstValue& seq, int32_t dtype, const char* op) {
  const int32_t s = seq.sequence_dtype();
  if (s != LOOM_DTYPE_UNDEFINED && s != dtype)
    sdk::fail_invalid(std::string(op) + ": tensor type " + sdk::dtype_name(dtype) +
                      " differs from the sequence's element type " + sdk::dtype_name(s));
  return dtype;
}

// Optional position input `i`; nullopt when omitted.
std::optional<int64_t> position_input(const KernelContext& ctx, size_t i, const char* op) {
  const sdk::ConstTensor p = ctx.input(i);
  if (!p.exists()) return std::nullopt;
  return flow::read_int_scalar(p, op, "position");
}

void sequence_construct(KernelContext& ctx) {
  const size_t n = ctx.input_count();
  if (n == 0) sdk::fail_invalid("SequenceConstruct: needs at least one input");
  const sdk::ConstTensor first = flow::tensor_of(ctx.input_value(0), "SequenceConstruct", "input 0");
  OwnedValue seq = OwnedValue::sequence(first.dtype());
  for (size_t i = 0; i < n; ++i) {
    const ConstValue v = ctx.input_value(i);
    const sdk::ConstTensor t = flow::tensor_of(v, "SequenceConstruct", "input " + std::to_string(i));
    if (t.dtype() != first.dtype())
      sdk::fail_invalid("SequenceConstruct: input " + std::to_string(i) + " has type " + sdk::dtype_name(t.dtype()) +
                        ", input 0 has " + sdk::dtype_name(first.dtype()));
    seq.append(OwnedValue::clone(v));
  }
  ctx.set_output(0, std::move(seq));
}

void sequence_empty(KernelContext& ctx) {
  const int64_t dtype = ctx.node().attr_int("dtype", LOOM_DTYPE_FLOAT);
  ctx.set_output(0, OwnedValue::sequence(static_cast<int32_t>(dtype)));
}

void sequence_at(KernelContext& ctx) {
  const ConstValue seq = sequence_input(ctx, 0, "SequenceAt");
  const int64_t n = static_cast<int64_t>(seq.sequence_length());
  const int64_t pos = flow::read_int_scalar(ctx.required_input(1), "SequenceAt", "position");
  if (pos < -n || pos >= n)
    sdk::fail_invalid("SequenceAt: position " + std::to_string(pos) + " out of range for a sequence of length " +
                      std::to_string(n));
  ctx.set_output(0, OwnedValue::clone(seq.at(static_cast<size_t>(pos < 0 ? pos + n : pos))));
}

void sequence_insert(KernelContext& ctx) {
  const ConstValue seq = sequence_input(ctx, 0, "SequenceInsert");
  const ConstValue tensor = ctx.input_value(1);
  const sdk::ConstTensor t = flow::tensor_of(tensor, "SequenceInsert", "input 1");
  const int32_t dtype = checked_elem_dtype(seq, t.dtype(), "SequenceInsert");
  const int64_t n = static_cast<int64_t>(seq.sequence_length());
  int64_t pos = position_input(ctx, 2, "SequenceInsert").value_or(n);
  if (pos < -n || pos > n)
    sdk::fail_invalid("SequenceInsert: position " + std::to_string(pos) + " out of range for a sequence of length " +
                      std::to_string(n));
  if (pos < 0) pos += n;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (i == pos) order.push_back(-1);
    order.push_back(i);
  }
  if (pos == n) order.push_back(-1);
  ctx.set_output(0, flow::rebuild_sequence(seq, dtype, order, tensor));
}

void sequence_erase(KernelContext& ctx) {
  const ConstValue seq = sequence_input(ctx, 0, "SequenceErase");
  const int64_t n = static_cast<int64_t>(seq.sequence_length());
  int64_t pos = position_input(ctx, 1, "SequenceErase").value_or(-1);
  if (pos < -n || pos >= n)
    sdk::fail_invalid("SequenceErase: position " + std::to_string(pos) + " out of range for a sequence of length " +
                      std::to_string(n));
  if (pos < 0) pos += n;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i)
    if (i != pos) order.push_back(i);
  ctx.set_output(0, flow::rebuild_sequence(seq, seq.sequence_dtype(), order, ConstValue()));
}

void sequence_length(KernelContext& ctx) {
  const ConstValue seq = sequence_input(ctx, 0, "SequenceLength");
  sdk::Tensor out = ctx.output(0, {}, LOOM_DTYPE_INT64);
  out.mutable_data<int64_t>()[0] = static_cast<int64_t>(seq.sequence_length());
}

void split_to_sequence(KernelContext& ctx) {
  constexpr const char* op = "SplitToSequence";
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape shape = x.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) sdk::fail_invalid("SplitToSequence: input must have rank >= 1");
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), rank, op);
  const int64_t dim = shape[static_cast<size_t>(axis)];
  const bool keepdims = ctx.node().attr_int("keepdims", 1) != 0;
  const sdk::ConstTensor split = ctx.input(1);
  OwnedValue seq = OwnedValue::sequence(x.dtype());
  if (!split.exists()) {
    for (int64_t i = 0; i < dim; ++i) seq.append(flow::slice_axis(x, axis, i, 1, keepdims, op));
  } else {
    const std::vector<int64_t> s = read_indices(split, op, "split");
    std::vector<int64_t> lengths;
    if (split.rank() == 0) {
      if (s[0] <= 0) sdk::fail_invalid("SplitToSequence: split must be positive, got " + std::to_string(s[0]));
      for (int64_t start = 0; start < dim; start += s[0]) lengths.push_back(std::min(s[0], dim - start));
    } else if (split.rank() == 1) {
      for (int64_t v : s)
        if (v < 0) sdk::fail_invalid("SplitToSequence: split lengths must not be negative, got " + std::to_string(v));
      const int64_t total = std::accumulate(s.begin(), s.end(), int64_t{0});
      if (total != dim)
        sdk::fail_invalid("SplitToSequence: split lengths sum to " + std::to_string(total) + ", axis " +
                          std::to_string(axis) + " has size " + std::to_string(dim));
      lengths = s;
    } else {
      sdk::fail_invalid("SplitToSequence: split must be a scalar or 1-D, got rank " + std::to_string(split.rank()));
    }
    int64_t start = 0;
    for (int64_t len : lengths) {
      seq.append(flow::slice_axis(x, axis, start, len, true, op));
      start += len;
    }
  }
  ctx.set_output(0, std::move(seq));
}

void concat_from_sequence(KernelContext& ctx) {
  constexpr const char* op = "ConcatFromSequence";
  const ConstValue seq = sequence_input(ctx, 0, op);
  const bool new_axis = ctx.node().attr_int("new_axis", 0) != 0;
  const int64_t axis_attr = ctx.node().required_int("axis");
  const size_t n = seq.sequence_length();
  if (n == 0) sdk::fail_invalid("ConcatFromSequence: the input sequence is empty");
  std::vector<sdk::ConstTensor> parts;
  for (size_t i = 0; i < n; ++i) parts.push_back(flow::tensor_of(seq.at(i), op, "sequence element"));
  const int64_t rank = static_cast<int64_t>(parts[0].rank());
  const int64_t axis = normalize_axis(axis_attr, new_axis ? rank + 1 : rank, op);
  const Shape shape = flow::concat_shape(parts, axis, new_axis, op);
  const sdk::Tensor out = ctx.output(0, shape, parts[0].dtype());
  flow::concat_into(parts, axis, new_axis, out, op);
}

}  // namespace

void register_sequence_kernels(sdk::KernelRegistry& r) {
  r.add("", "SequenceConstruct", 11, kOpen, sequence_construct);
  r.add("", "SequenceEmpty", 11, kOpen, sequence_empty);
  r.add("", "SequenceAt", 11, kOpen, sequence_at);
  r.add("", "SequenceInsert", 11, kOpen, sequence_insert);
  r.add("", "SequenceErase", 11, kOpen, sequence_erase);
  r.add("", "SequenceLength", 11, kOpen, sequence_length);
  r.add("", "SplitToSequence", 11, kOpen, split_to_sequence);
  r.add("", "ConcatFromSequence", 11, kOpen, concat_from_sequence);
}

}  // namespace loom::reference
