// Control-flow kernels: If, Loop, Scan (opset 8 with a batch axis, opset 9+
// with scan axes and directions) and SequenceMap (opset 17). Bodies run
// through the host (KernelContext::run_subgraph); outer-scope values they
// capture are supplied by the host, so the kernels pass only formal inputs.
#include <algorithm>
#include <optional>

#include "kernel_families.h"
#include "kernels/flow_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::ConstValue;
using sdk::KernelContext;
using sdk::OwnedValue;

constexpr int kOpen = LOOM_OPSET_OPEN_END;

bool output_wanted(const KernelContext& ctx, size_t i) {
  return i < ctx.output_count() && !ctx.node().output_name(i).empty();
}

// Element type for a scan output that received no elements: the statically
// inferred type, float when unknown.
int32_t static_output_dtype(const KernelContext& ctx, size_t i) {
  const int32_t d = ctx.node().output_dtype(i);
  return d == LOOM_DTYPE_UNDEFINED ? LOOM_DTYPE_FLOAT : d;
}

// Loop-carried values: the current value of each is either an input of the
// node (not owned) or a value a body run produced (owned).
class Carried {
 public:
  explicit Carried(size_t n) : owned_(n), views_(n) {}
  void set_input(size_t i, ConstValue v) {
    if (!v.exists()) {  // an omitted input carries an empty optional
      owned_[i] = OwnedValue::none();
      v = owned_[i].view();
    }
    views_[i] = v;
  }
  void set_owned(size_t i, OwnedValue v) {
    owned_[i] = std::move(v);
    views_[i] = owned_[i].view();
  }
  const std::vector<ConstValue>& views() const { return views_; }
  // Hands the final value of `i` to output `out` (a copy if it is an input).
  void emit(const KernelContext& ctx, size_t i, size_t out) {
    if (!output_wanted(ctx, out)) return;
    if (owned_[i].view().exists()) ctx.set_output(out, std::move(owned_[i]));
    else ctx.set_output(out, OwnedValue::clone(views_[i]));
  }

 private:
  std::vector<OwnedValue> owned_;
  std::vector<ConstValue> views_;
};

// Stacks per-iteration scan output elements along a new axis `axis` into
// output `out`; an empty list gives a tensor of shape [0].
void emit_stacked(const KernelContext& ctx, size_t out, const std::vector<OwnedValue>& elements, int64_t axis,
                  bool reverse, const char* op) {
  if (!output_wanted(ctx, out)) return;
  if (elements.empty()) {
    ctx.output(out, {0}, static_output_dtype(ctx, out));
    return;
  }
  std::vector<ConstTensor> parts;
  for (const OwnedValue& e : elements) parts.push_back(flow::tensor_of(e.view(), op, "scan output element"));
  if (reverse) std::reverse(parts.begin(), parts.end());
  const int64_t a = normalize_axis(axis, static_cast<int64_t>(parts[0].rank()) + 1, op);
  const Shape shape = flow::concat_shape(parts, a, true, op);
  const sdk::Tensor t = ctx.output(out, shape, parts[0].dtype());
  flow::concat_into(parts, a, true, t, op);
}

// ---------------------------------------------------------------- If

void if_op(KernelContext& ctx) {
  const bool cond = flow::read_bool(ctx.required_input(0), "If", "condition");
  const char* branch = cond ? "then_branch" : "else_branch";
  const size_t n = flow::subgraph_output_count(ctx.node(), branch);
  if (n != ctx.output_count())
    sdk::fail_invalid(std::string("If: ") + branch + " has " + std::to_string(n) + " outputs, the node has " +
                      std::to_string(ctx.output_count()));
  std::vector<OwnedValue> outs = ctx.run_subgraph(branch, {}, n);
  for (size_t i = 0; i < n; ++i)
    if (output_wanted(ctx, i)) ctx.set_output(i, std::move(outs[i]));
}

// ---------------------------------------------------------------- Loop

void loop(KernelContext& ctx) {
  constexpr const char* op = "Loop";
  const size_t n_in = ctx.input_count();
  if (n_in < 2) sdk::fail_invalid("Loop: needs inputs M and cond (either may be empty)");
  const size_t n_carried = n_in - 2;
  const size_t body_outputs = flow::subgraph_output_count(ctx.node(), "body");
  if (body_outputs < 1 + n_carried)
    sdk::fail_invalid("Loop: body has " + std::to_string(body_outputs) + " outputs, needs at least " +
                      std::to_string(1 + n_carried) + " (cond and the loop-carried values)");
  const size_t n_scan = body_outputs - 1 - n_carried;
  if (ctx.output_count() > n_carried + n_scan)
    sdk::fail_invalid("Loop: the node has " + std::to_string(ctx.output_count()) + " outputs, the body yields " +
                      std::to_string(n_carried + n_scan));

  std::optional<int64_t> trip_count;
  if (const ConstTensor m = ctx.input(0); m.exists()) trip_count = flow::read_int_scalar(m, op, "M");
  const bool has_cond = ctx.input(1).exists();
  bool cond = has_cond ? flow::read_bool(ctx.input(1), op, "cond") : true;

  Carried carried(n_carried);
  for (size_t i = 0; i < n_carried; ++i) carried.set_input(i, ctx.input_value(2 + i));
  std::vector<std::vector<OwnedValue>> scans(n_scan);

  for (int64_t it = 0; (!trip_count || it < *trip_count) && cond; ++it) {
    const OwnedValue iter = flow::int64_scalar(it);
    const OwnedValue cond_in = flow::bool_scalar(cond);
    std::vector<ConstValue> in{iter.view(), cond_in.view()};
    in.insert(in.end(), carried.views().begin(), carried.views().end());
    std::vector<OwnedValue> out = ctx.run_subgraph("body", in, body_outputs);
    // The body's cond output is ignored in a for-loop (M given, cond empty).
    // With neither M nor cond the spec loops forever; we stop when the body
    // says so, like other runtimes.
    if (has_cond || !trip_count) cond = flow::read_bool(flow::tensor_of(out[0].view(), op, "body cond output"), op, "body cond output");
    for (size_t i = 0; i < n_carried; ++i) carried.set_owned(i, std::move(out[1 + i]));
    for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(std::move(out[1 + n_carried + k]));
  }

  for (size_t i = 0; i < n_carried && i < ctx.output_count(); ++i) carried.emit(ctx, i, i);
  for (size_t k = 0; k < n_scan && n_carried + k < ctx.output_count(); ++k)
    emit_stacked(ctx, n_carried + k, scans[k], 0, false, op);
}

// ---------------------------------------------------------------- Scan 9+

std::vector<int64_t> per_item(const sdk::Node& node, const char* attr, size_t n, const char* op) {
  std::vector<int64_t> v = node.attr_ints(attr, std::vector<int64_t>(n, 0));
  if (v.size() != n)
    sdk::fail_invalid(std::string(op) + ": attribute '" + attr + "' has " + std::to_string(v.size()) +
                      " entries, expected " + std::to_string(n));
  return v;
}

void scan9(KernelContext& ctx) {
  constexpr const char* op = "Scan";
  const sdk::Node node = ctx.node();
  const int64_t m_attr = node.required_int("num_scan_inputs");
  const size_t n_in = ctx.input_count();
  if (m_attr < 1 || static_cast<size_t>(m_attr) > n_in)
    sdk::fail_invalid("Scan: num_scan_inputs " + std::to_string(m_attr) + " is invalid for " + std::to_string(n_in) +
                      " inputs");
  const size_t m = static_cast<size_t>(m_attr);
  const size_t n_state = n_in - m;
  const size_t body_outputs = flow::subgraph_output_count(node, "body");
  if (body_outputs < n_state)
    sdk::fail_invalid("Scan: body has fewer outputs than there are state variables");
  const size_t k_out = body_outputs - n_state;
  const std::vector<int64_t> in_axes = per_item(node, "scan_input_axes", m, op);
  const std::vector<int64_t> in_dirs = per_item(node, "scan_input_directions", m, op);
  const std::vector<int64_t> out_axes = per_item(node, "scan_output_axes", k_out, op);
  const std::vector<int64_t> out_dirs = per_item(node, "scan_output_directions", k_out, op);

  std::vector<ConstTensor> xs;
  std::vector<int64_t> axes;
  int64_t length = -1;
  for (size_t j = 0; j < m; ++j) {
    const ConstTensor x = flow::tensor_of(ctx.input_value(n_state + j), op, "scan input");
    const int64_t axis = normalize_axis(in_axes[j], static_cast<int64_t>(x.rank()), op);
    const int64_t len = x.shape()[static_cast<size_t>(axis)];
    if (length >= 0 && len != length)
      sdk::fail_invalid("Scan: scan input " + std::to_string(j) + " has sequence length " + std::to_string(len) +
                        ", scan input 0 has " + std::to_string(length));
    length = len;
    xs.push_back(x);
    axes.push_back(axis);
  }

  Carried states(n_state);
  for (size_t i = 0; i < n_state; ++i) states.set_input(i, ctx.input_value(i));
  std::vector<std::vector<OwnedValue>> scans(k_out);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<OwnedValue> slices;
    for (size_t j = 0; j < m; ++j)
      slices.push_back(flow::slice_axis(xs[j], axes[j], in_dirs[j] ? length - 1 - t : t, 1, false, op));
    std::vector<ConstValue> in = states.views();
    for (const OwnedValue& s : slices) in.push_back(s.view());
    std::vector<OwnedValue> out = ctx.run_subgraph("body", in, body_outputs);
    for (size_t i = 0; i < n_state; ++i) states.set_owned(i, std::move(out[i]));
    for (size_t k = 0; k < k_out; ++k) scans[k].push_back(std::move(out[n_state + k]));
  }
  for (size_t i = 0; i < n_state && i < ctx.output_count(); ++i) states.emit(ctx, i, i);
  for (size_t k = 0; k < k_out && n_state + k < ctx.output_count(); ++k)
    emit_stacked(ctx, n_state + k, scans[k], out_axes[k], out_dirs[k] != 0, op);
}

// ---------------------------------------------------------------- Scan 8

// Copies `parts` one after another into `out` (stacking along axis 0 of a
// layout the caller chose).
void copy_sequentially(const std::vector<ConstTensor>& parts, const sdk::Tensor& out, const char* op) {
  int64_t offset = 0;
  for (const ConstTensor& p : parts) {
    if (offset + p.size() > out.size()) sdk::fail_invalid(std::string(op) + ": output too small");
    if (p.size() > 0) ElementCopier(p, out, op).copy(offset, 0, p.size());
    offset += p.size();
  }
}

void scan8(KernelContext& ctx) {
  constexpr const char* op = "Scan";
  const sdk::Node node = ctx.node();
  const int64_t m_attr = node.required_int("num_scan_inputs");
  const size_t n_in = ctx.input_count();
  if (m_attr < 1 || static_cast<size_t>(m_attr) + 1 > n_in)
    sdk::fail_invalid("Scan: num_scan_inputs " + std::to_string(m_attr) + " is invalid for " + std::to_string(n_in) +
                      " inputs");
  const size_t m = static_cast<size_t>(m_attr);
  const size_t n_state = n_in - 1 - m;
  const size_t body_outputs = flow::subgraph_output_count(node, "body");
  if (body_outputs < n_state) sdk::fail_invalid("Scan: body has fewer outputs than there are state variables");
  const size_t k_out = body_outputs - n_state;
  const std::vector<int64_t> dirs = per_item(node, "directions", m, op);

  std::vector<ConstTensor> xs, inits;
  int64_t batch = -1, max_len = -1;
  for (size_t j = 0; j < m; ++j) {
    const ConstTensor x = flow::tensor_of(ctx.input_value(1 + n_state + j), op, "scan input");
    if (x.rank() < 2) sdk::fail_invalid("Scan: scan inputs need rank >= 2 (batch and sequence axes)");
    if (j > 0 && (x.dim(0) != batch || x.dim(1) != max_len))
      sdk::fail_invalid("Scan: scan input " + std::to_string(j) + " has shape " + shape_string(x.shape()) +
                        ", inconsistent batch size or sequence length");
    batch = x.dim(0);
    max_len = x.dim(1);
    xs.push_back(x);
  }
  for (size_t i = 0; i < n_state; ++i) {
    const ConstTensor s = flow::tensor_of(ctx.input_value(1 + i), op, "initial state");
    if (s.rank() < 1 || s.dim(0) != batch)
      sdk::fail_invalid("Scan: initial state " + std::to_string(i) + " has shape " + shape_string(s.shape()) +
                        ", expected batch size " + std::to_string(batch) + " on axis 0");
    inits.push_back(s);
  }
  std::vector<int64_t> lens(static_cast<size_t>(batch), max_len);
  if (const ConstTensor sl = ctx.input(0); sl.exists()) {
    lens = read_indices(sl, op, "sequence_lens");
    if (static_cast<int64_t>(lens.size()) != batch)
      sdk::fail_invalid("Scan: sequence_lens has " + std::to_string(lens.size()) + " entries, batch size is " +
                        std::to_string(batch));
    for (int64_t l : lens)
      if (l < 0 || l > max_len)
        sdk::fail_invalid("Scan: sequence length " + std::to_string(l) + " out of range [0, " +
                          std::to_string(max_len) + "]");
  }

  // final_states[i][b]; scans[k][b][t] (only the first lens[b] entries).
  std::vector<std::vector<OwnedValue>> final_states(n_state);
  std::vector<std::vector<std::vector<OwnedValue>>> scans(k_out);
  for (auto& per_output : scans) per_output.resize(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    Carried states(n_state);
    for (size_t i = 0; i < n_state; ++i) states.set_owned(i, flow::slice_axis(inits[i], 0, b, 1, false, op));
    std::vector<OwnedValue> xb;
    for (size_t j = 0; j < m; ++j) xb.push_back(flow::slice_axis(xs[j], 0, b, 1, false, op));
    const int64_t n = lens[static_cast<size_t>(b)];
    for (int64_t t = 0; t < n; ++t) {
      std::vector<OwnedValue> slices;
      for (size_t j = 0; j < m; ++j)
        slices.push_back(
            flow::slice_axis(xb[j].view().tensor(), 0, dirs[j] ? n - 1 - t : t, 1, false, op));
      std::vector<ConstValue> in = states.views();
      for (const OwnedValue& s : slices) in.push_back(s.view());
      std::vector<OwnedValue> out = ctx.run_subgraph("body", in, body_outputs);
      for (size_t i = 0; i < n_state; ++i) states.set_owned(i, std::move(out[i]));
      for (size_t k = 0; k < k_out; ++k) scans[k][static_cast<size_t>(b)].push_back(std::move(out[n_state + k]));
    }
    for (size_t i = 0; i < n_state; ++i) final_states[i].push_back(OwnedValue::clone(states.views()[i]));
  }

  for (size_t i = 0; i < n_state && i < ctx.output_count(); ++i) {
    if (!output_wanted(ctx, i)) continue;
    std::vector<ConstTensor> parts;
    for (const OwnedValue& v : final_states[i]) parts.push_back(flow::tensor_of(v.view(), op, "state output"));
    if (parts.empty()) {
      ctx.output(i, inits[i].shape(), inits[i].dtype());
      continue;
    }
    const Shape shape = flow::concat_shape(parts, 0, true, op);
    flow::concat_into(parts, 0, true, ctx.output(i, shape, parts[0].dtype()), op);
  }
  for (size_t k = 0; k < k_out && n_state + k < ctx.output_count(); ++k) {
    const size_t o = n_state + k;
    if (!output_wanted(ctx, o)) continue;
    // Element shape and type from any produced element; padding is zeros.
    const OwnedValue* sample = nullptr;
    for (const auto& per_batch : scans[k])
      if (!per_batch.empty()) sample = &per_batch[0];
    if (sample == nullptr) {
      ctx.output(o, {batch, max_len}, static_output_dtype(ctx, o));
      continue;
    }
    const ConstTensor s = flow::tensor_of(sample->view(), op, "scan output element");
    const OwnedValue zero = OwnedValue::tensor(s.dtype(), s.shape());
    std::vector<ConstTensor> parts;
    for (const auto& per_batch : scans[k]) {
      for (const OwnedValue& e : per_batch) {
        const ConstTensor t = flow::tensor_of(e.view(), op, "scan output element");
        if (t.shape() != s.shape() || t.dtype() != s.dtype())
          sdk::fail_invalid("Scan: scan output " + std::to_string(k) + " changes shape or type between iterations");
        parts.push_back(t);
      }
      for (size_t t = per_batch.size(); t < static_cast<size_t>(max_len); ++t) parts.push_back(zero.view().tensor());
    }
    Shape shape{batch, max_len};
    for (int64_t d : s.shape()) shape.push_back(d);
    copy_sequentially(parts, ctx.output(o, shape, s.dtype()), op);
  }
}

// ---------------------------------------------------------------- SequenceMap

void sequence_map(KernelContext& ctx) {
  constexpr const char* op = "SequenceMap";
  const size_t n_in = ctx.input_count();
  const ConstValue first = ctx.input_value(0);
  if (!first.exists() || !first.is_sequence()) sdk::fail_invalid("SequenceMap: input 0 must be a sequence");
  const size_t n = first.sequence_length();
  std::vector<ConstValue> inputs;
  for (size_t j = 0; j < n_in; ++j) {
    const ConstValue v = ctx.input_value(j);
    if (!v.exists() || v.is_none()) sdk::fail_invalid("SequenceMap: input " + std::to_string(j) + " is missing");
    if (v.is_sequence() && v.sequence_length() != n)
      sdk::fail_invalid("SequenceMap: input " + std::to_string(j) + " has " + std::to_string(v.sequence_length()) +
                        " elements, input 0 has " + std::to_string(n));
    inputs.push_back(v);
  }
  const size_t body_outputs = flow::subgraph_output_count(ctx.node(), "body");
  if (body_outputs != ctx.output_count())
    sdk::fail_invalid("SequenceMap: body has " + std::to_string(body_outputs) + " outputs, the node has " +
                      std::to_string(ctx.output_count()));
  std::vector<std::vector<OwnedValue>> results(body_outputs);
  for (size_t i = 0; i < n; ++i) {
    std::vector<ConstValue> in;
    for (const ConstValue& v : inputs) in.push_back(v.is_sequence() ? v.at(i) : v);
    std::vector<OwnedValue> out = ctx.run_subgraph("body", in, body_outputs);
    for (size_t k = 0; k < body_outputs; ++k) results[k].push_back(std::move(out[k]));
  }
  for (size_t k = 0; k < body_outputs; ++k) {
    if (!output_wanted(ctx, k)) continue;
    int32_t dtype = static_output_dtype(ctx, k);
    if (!results[k].empty()) dtype = flow::tensor_of(results[k][0].view(), op, "body output").dtype();
    OwnedValue seq = OwnedValue::sequence(dtype);
    for (OwnedValue& e : results[k]) {
      const ConstTensor t = flow::tensor_of(e.view(), op, "body output");
      if (t.dtype() != dtype)
        sdk::fail_invalid("SequenceMap: body output " + std::to_string(k) + " changes type between elements");
      seq.append(std::move(e));
    }
    ctx.set_output(k, std::move(seq));
  }
}

}  // namespace

void register_control_flow_kernels(sdk::KernelRegistry& r) {
  r.add("", "If", 1, kOpen, if_op);
  r.add("", "Loop", 1, kOpen, loop);
  r.add("", "Scan", 8, 8, scan8);
  r.add("", "Scan", 9, kOpen, scan9);
  r.add("", "SequenceMap", 17, kOpen, sequence_map);
}

}  // namespace loom::reference
