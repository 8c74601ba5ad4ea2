// Slice (unit steps), Split and Gather of float32 tensors as oneDNN reorders
// from windows of the input (submemories of its plain layout) into a new
// plain value, so YOLO heads' channel splits, ShuffleNet's halves and a
// transformer's x[:, 0] stay inside the partition. starts / ends / axes /
// split / Gather's indices must be constants; Slice's indices are clamped as
// ONNX clamps them. A result that turns out empty for a run's shapes leaves
// that run to the fallback provider (oneDNN has no empty memory).
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>

#include "op_support.h"
#include "ops/op_builders.h"

namespace loom::onednn {
namespace {

// Gather copies one window per index: beyond a few, a host gather would do better.
constexpr size_t kMaxGatherIndices = 16;

struct SliceParams {
  std::vector<int64_t> starts, ends, axes;
};

std::optional<SliceParams> slice_params(const NodeSpec& n) {
  auto starts = n.ints_operand(1, "starts", 10), ends = n.ints_operand(2, "ends", 10);
  auto axes = n.ints_operand(3, "axes", 10), steps = n.ints_operand(4, "steps", 10);
  if (!starts || !ends || !axes || !steps) return std::nullopt;
  if (std::any_of(steps->begin(), steps->end(), [](int64_t s) { return s != 1; })) return std::nullopt;
  if (starts->size() != ends->size() || (!axes->empty() && axes->size() != starts->size())) return std::nullopt;
  return SliceParams{*starts, *ends, *axes};
}

// The window [offset, offset + dims) of each of `in`'s dims, or why not.
std::string slice_window(const SliceParams& p, const std::vector<int64_t>& in, std::vector<int64_t>* offsets,
                         std::vector<int64_t>* dims) {
  const auto r = static_cast<int64_t>(in.size());
  offsets->assign(in.size(), 0);
  *dims = in;
  std::vector<bool> seen(in.size(), false);
  for (size_t k = 0; k < p.starts.size(); ++k) {
    int64_t a = p.axes.empty() ? static_cast<int64_t>(k) : p.axes[k];
    if (a < -r || a >= r) return "axis out of range";
    if (a < 0) a += r;
    if (seen[static_cast<size_t>(a)]) return "an axis given twice";
    seen[static_cast<size_t>(a)] = true;
    const int64_t d = in[static_cast<size_t>(a)];
    auto clamp = [d](int64_t v) { return std::clamp(v < 0 ? v + d : v, int64_t{0}, d); };
    const int64_t s = clamp(p.starts[k]), e = clamp(p.ends[k]);
    (*offsets)[static_cast<size_t>(a)] = s;
    (*dims)[static_cast<size_t>(a)] = std::max<int64_t>(0, e - s);
  }
  return {};
}

// Copies the window of `x` into a new plain value named `name`.
ValueId copy_window(ProgramBuilder& b, const NodeSpec& n, ValueId x, const std::vector<int64_t>& offsets,
                    const std::vector<int64_t>& dims, const std::string& name) {
  if (std::find(dims.begin(), dims.end(), 0) != dims.end())
    throw sdk::Error("cpu_onednn: " + n.label() + ": an empty result for these shapes", LOOM_STATUS_NOT_IMPLEMENTED);
  const ValueId src = b.plain(x);
  const ValueId window = b.alias(src, b.desc(src).submemory_desc(dims, offsets), dims);
  const ValueId dst = b.new_value(plain_desc(dims), dims, name);
  b.add_reorder(window, dst, n.label());
  return dst;
}

// Split's part sizes along `axis` of length `d`: the constant `split`, or
// equal parts (the last smaller when opset 18's num_outputs does not divide).
std::optional<std::vector<int64_t>> split_sizes(const NodeSpec& n, int64_t d) {
  auto split = n.ints_operand(1, "split", 13);
  if (!split) return std::nullopt;
  const auto parts = static_cast<int64_t>(n.outputs.size());
  if (!split->empty()) return split;
  if (parts < 1) return std::nullopt;
  const int64_t each = (d + parts - 1) / parts;
  std::vector<int64_t> out;
  for (int64_t left = d, k = 0; k < parts; ++k, left -= each) out.push_back(std::clamp(left, int64_t{0}, each));
  return out;
}

// The node's `axis` attribute (default 0) as an index into `rank` dims;
// fails naming the node when out of range.
int64_t axis_of(const NodeSpec& n, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  const int64_t axis = n.attr_int("axis", 0);
  if (axis < -r || axis >= r) n.fail("axis out of range");
  return axis < 0 ? axis + r : axis;
}

}  // namespace

SupportVerdict check_slice(const NodeSpec& n) {
  const auto rank = n.input_rank(0);
  if (!rank || *rank < 1 || *rank > 6) return {OpRole::kUnsupported, "rank must be known and 1..6"};
  if (n.op_type == "Gather") {
    auto indices = n.small_constants.find(1);
    auto shape = n.constant_shapes.find(1);
    if (indices == n.small_constants.end() || shape == n.constant_shapes.end() || shape->second.size() > 1 ||
        indices->second.empty() || indices->second.size() > kMaxGatherIndices)
      return {OpRole::kUnsupported, "indices must be a constant scalar or list of 1.." +
                                        std::to_string(kMaxGatherIndices) + " values"};
    return {OpRole::kCompute, {}};
  }
  if (n.op_type == "Split") {
    if (n.opset >= 13 && n.has_input(1) && !n.small_constants.count(1))
      return {OpRole::kUnsupported, "split must be a constant"};
    return {OpRole::kCompute, {}};
  }
  if (!slice_params(n)) return {OpRole::kUnsupported, "starts, ends and axes must be constants and steps 1"};
  return {OpRole::kCompute, {}};
}

size_t build_slice(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t> in = b.dims(x);
  const auto p = slice_params(n);
  if (!p) n.fail("starts, ends and axes must be constants and steps 1");
  std::vector<int64_t> offsets, dims;
  if (auto why = slice_window(*p, in, &offsets, &dims); !why.empty()) n.fail(why);
  b.define(n.outputs[0], copy_window(b, n, x, offsets, dims, n.outputs[0]));
  return 0;
}

size_t build_gather(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.plain(b.value_of(n.inputs[0]));
  const std::vector<int64_t> in = b.dims(x);
  const int64_t axis = axis_of(n, in.size());
  auto indices = n.small_constants.find(1);
  auto shape = n.constant_shapes.find(1);
  if (indices == n.small_constants.end() || shape == n.constant_shapes.end()) n.fail("indices must be a constant");
  const bool scalar = shape->second.empty();
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> kept = in;  // the result with the gathered axis kept
  kept[a] = static_cast<int64_t>(indices->second.size());
  std::vector<int64_t> out = kept;
  if (scalar) out.erase(out.begin() + axis);
  if (std::find(kept.begin(), kept.end(), 0) != kept.end())
    throw sdk::Error("cpu_onednn: " + n.label() + ": an empty result for these shapes", LOOM_STATUS_NOT_IMPLEMENTED);
  const ValueId dst = b.new_value(plain_desc(kept), kept, n.outputs[0]);
  std::vector<int64_t> from(in.size(), 0), to(in.size(), 0), one = in;
  one[a] = 1;
  for (size_t k = 0; k < indices->second.size(); ++k) {
    int64_t i = static_cast<int64_t>(indices->second[k]);
    if (i < -in[a] || i >= in[a])
      n.fail("index " + std::to_string(i) + " is out of range for a dimension of " + std::to_string(in[a]));
    from[a] = i < 0 ? i + in[a] : i;
    to[a] = static_cast<int64_t>(k);
    const ValueId window = b.alias(x, b.desc(x).submemory_desc(one, from), one);
    b.add_reorder(window, b.alias(dst, b.desc(dst).submemory_desc(one, to), one), n.label());
  }
  b.define(n.outputs[0], scalar ? b.view(dst, out) : dst);
  return 0;
}

size_t build_split(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t> in = b.dims(x);
  const int64_t axis = axis_of(n, in.size());
  const auto sizes = split_sizes(n, in[static_cast<size_t>(axis)]);
  if (!sizes || sizes->size() != n.outputs.size()) n.fail("split sizes do not match the outputs");
  int64_t total = 0;
  for (int64_t s : *sizes) total += s;
  if (total != in[static_cast<size_t>(axis)]) n.fail("split sizes do not add up to the axis");
  std::vector<int64_t> offsets(in.size(), 0);
  for (size_t k = 0; k < sizes->size(); ++k) {
    std::vector<int64_t> dims = in;
    dims[static_cast<size_t>(axis)] = (*sizes)[k];
    if (!n.outputs[k].empty()) b.define(n.outputs[k], copy_window(b, n, x, offsets, dims, n.outputs[k]));
    offsets[static_cast<size_t>(axis)] += (*sizes)[k];
  }
  return 0;
}

}  // namespace loom::onednn
