#include "program_builder.h"

#include "compiled_partition.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fusion_plan.h"
#include "ops/op_builders.h"

namespace loom::onednn {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kMaxRank = DNNL_MAX_NDIMS;

size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

// oneDNN errors carry no node context; add it.
[[noreturn]] void rethrow_with_context(const NodeSpec& n, const char* what) {
  throw sdk::Error("cpu_onednn: " + n.label() + ": " + what, LOOM_STATUS_INVALID_ARGUMENT);
}

}  // namespace

dnnl::memory::desc plain_desc(const std::vector<int64_t>& dims, dnnl::memory::data_type type) {
  std::vector<int64_t> d = dims.empty() ? std::vector<int64_t>{1} : dims;
  std::vector<int64_t> strides(d.size(), 1);
  for (size_t i = d.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * std::max<int64_t>(d[i], 1);
  return dnnl::memory::desc(d, type, strides);
}

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::optional<dnnl::memory::data_type> dnnl_type_of(int32_t loom_dtype) {
  switch (loom_dtype) {
    case LOOM_DTYPE_FLOAT: return dnnl::memory::data_type::f32;
    case LOOM_DTYPE_UINT8: return dnnl::memory::data_type::u8;
    case LOOM_DTYPE_INT8: return dnnl::memory::data_type::s8;
    case LOOM_DTYPE_INT32: return dnnl::memory::data_type::s32;
    default: return std::nullopt;
  }
}

int32_t loom_dtype_of(dnnl::memory::data_type type) {
  switch (type) {
    case dnnl::memory::data_type::u8: return LOOM_DTYPE_UINT8;
    case dnnl::memory::data_type::s8: return LOOM_DTYPE_INT8;
    case dnnl::memory::data_type::s32: return LOOM_DTYPE_INT32;
    default: return LOOM_DTYPE_FLOAT;
  }
}

ProgramBuilder::ProgramBuilder(const dnnl::engine& engine, const PartitionSpec& spec, const BuildInputs& inputs,
                               const EpOptions& options, PartitionConstants& constants, ReleaseFn release)
    : engine_(engine),
      spec_(spec),
      inputs_(inputs),
      options_(options),
      constants_(constants),
      release_(std::move(release)),
      may_decline_(std::any_of(spec.nodes.begin(), spec.nodes.end(), [](const NodeSpec& n) {
        return op_may_decline(n.op_type);
      })) {
  for (size_t i = 0; i < spec.outputs.size(); ++i) outputs_[spec.outputs[i]] = i;
  built_.assign(spec.nodes.size(), false);
  for (size_t i = 0; i < spec.nodes.size(); ++i)
    for (const std::string& in : spec.nodes[i].inputs)
      if (!in.empty()) readers_[in].push_back(i);
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const BuildInput& t = inputs[i];
    if (!t.exists) continue;
    const std::vector<int64_t>& dims = t.dims;
    const std::optional<dnnl::memory::data_type> type = dnnl_type_of(t.dtype);
    if (!type || *type == dnnl::memory::data_type::s32) {
      // int32 inputs (Attention's mask_index) become s32 values that builders
      // convert with a reorder; other non-float inputs (e.g. a Reshape's
      // shape) are read from the node spec.
      if (t.dtype == LOOM_DTYPE_INT32 && dims.size() <= kMaxRank && element_count(dims) > 0) {
        const std::vector<int64_t> d = dims.empty() ? std::vector<int64_t>{1} : dims;  // a scalar as one element
        std::vector<int64_t> strides(d.size(), 1);
        for (size_t k = d.size() - 1; k > 0; --k) strides[k - 1] = strides[k] * d[k];
        const BufferId b = add_buffer(BufferKind::kInput, i, static_cast<size_t>(element_count(d)) * sizeof(int32_t));
        names_[spec.inputs[i]] = add_value(dnnl::memory::desc(d, dnnl::memory::data_type::s32, strides), dims, b);
      }
      continue;
    }
    // Ranks may be unknown when claimed; oneDNN descriptors hold at most
    // DNNL_MAX_NDIMS dims. Name a node that reads the input.
    if (dims.size() > kMaxRank) {
      auto r = readers_.find(spec.inputs[i]);
      const std::string why = "input '" + spec.inputs[i] + "' has rank " + std::to_string(dims.size()) +
                              ", above oneDNN's limit of " + std::to_string(kMaxRank);
      if (r != readers_.end() && !r->second.empty()) spec.nodes[r->second.front()].fail(why);
      throw sdk::Error("cpu_onednn: " + why, LOOM_STATUS_INVALID_ARGUMENT);
    }
    // float32, and uint8 / int8 (quantized ops' data, weights and zero points).
    const BufferId b = add_buffer(BufferKind::kInput, i, static_cast<size_t>(element_count(dims)) * sdk::dtype_size(t.dtype));
    names_[spec.inputs[i]] = add_value(plain_desc(dims, *type), dims, b);
  }
}

ValueId ProgramBuilder::value_of(const std::string& name) const {
  auto it = names_.find(name);
  if (it == names_.end())
    throw sdk::Error("cpu_onednn: value '" + name + "' is not available as a tensor in this partition");
  return it->second;
}

bool ProgramBuilder::is_constant(ValueId v) const {
  const Buffer& b = buffers_[values_[v].buffer];
  return b.kind == BufferKind::kPacked || (b.kind == BufferKind::kInput && spec_.input_is_constant[b.index]);
}

std::optional<size_t> ProgramBuilder::unbuilt_readers(BufferId buffer, std::optional<size_t> except) const {
  size_t count = 0;
  for (const auto& [name, value] : names_) {
    if (values_[value].buffer != buffer) continue;
    if (outputs_.count(name)) return std::nullopt;
    auto it = readers_.find(name);
    if (it == readers_.end()) continue;
    for (size_t r : it->second) count += r != except && !built_[r] ? 1 : 0;
  }
  return count;
}

bool ProgramBuilder::can_overwrite(ValueId v, const NodeSpec& reader) const {
  const BufferId buffer = values_[v].buffer;
  if (buffers_[buffer].kind != BufferKind::kArena) return false;
  return unbuilt_readers(buffer, static_cast<size_t>(&reader - spec_.nodes.data())) == size_t{0};
}

BufferId ProgramBuilder::add_buffer(BufferKind kind, size_t index, size_t bytes) {
  Buffer b;
  b.kind = kind;
  b.index = index;
  b.bytes = bytes;
  b.first_step = b.last_step = static_cast<int>(steps_.size());
  buffers_.push_back(std::move(b));
  return buffers_.size() - 1;
}

ValueId ProgramBuilder::add_value(const dnnl::memory::desc& desc, const std::vector<int64_t>& dims, BufferId buffer) {
  values_.push_back(Value{desc, dims, buffer});
  return values_.size() - 1;
}

ValueId ProgramBuilder::new_value(const dnnl::memory::desc& desc, const std::vector<int64_t>& dims,
                                  const std::string& name) {
  auto out = outputs_.find(name);
  if (!name.empty() && out != outputs_.end() && !output_taken_.count(out->second) &&
      desc == plain_desc(dims, desc.data_type())) {
    output_taken_.insert(out->second);
    return add_value(desc, dims, add_buffer(BufferKind::kOutput, out->second, desc.get_size()));
  }
  return add_value(desc, dims, add_buffer(BufferKind::kArena, 0, desc.get_size()));
}

ValueId ProgramBuilder::new_constant(const std::vector<float>& data, const std::vector<int64_t>& dims) {
  return new_constant(data.data(), plain_desc(dims), dims);
}

ValueId ProgramBuilder::new_constant(const void* data, const dnnl::memory::desc& desc, const std::vector<int64_t>& dims) {
  const BufferId b = add_buffer(BufferKind::kPacked, 0, desc.get_size());
  buffers_[b].packed = dnnl::memory(desc, engine_);
  std::memcpy(buffers_[b].packed.get_data_handle(), data, desc.get_size());
  return add_value(desc, dims, b);
}

ValueId ProgramBuilder::alias(ValueId v, const dnnl::memory::desc& desc, const std::vector<int64_t>& dims) {
  return add_value(desc, dims, values_[v].buffer);
}

ValueId ProgramBuilder::view(ValueId v, const std::vector<int64_t>& new_dims) {
  const dnnl::memory::data_type type = desc(v).data_type();
  if (new_dims == dims(v) && desc(v) == plain_desc(new_dims, type)) return v;
  const ValueId p = plain(v);
  if (element_count(new_dims) != element_count(dims(p)))
    throw sdk::Error("cpu_onednn: internal: view changes the element count");
  return alias(p, plain_desc(new_dims, type), new_dims);
}

ValueId ProgramBuilder::require(ValueId v, const dnnl::memory::desc& desc) {
  if (values_[v].desc == desc) return v;
  if (is_constant(v)) return pack(v, desc);
  const ValueId out = new_value(desc, values_[v].dims);
  add_reorder(v, out, "layout change");
  return out;
}

dnnl::primitive_attr ProgramBuilder::attr() const {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

void ProgramBuilder::touch(ValueId v) {
  Buffer& b = buffers_[values_[v].buffer];
  b.last_step = std::max(b.last_step, static_cast<int>(steps_.size()));
}

void ProgramBuilder::add_step(const dnnl::primitive& p, std::vector<std::pair<int, ValueId>> args,
                              const dnnl::memory::desc& scratchpad, const std::string& label) {
  for (const auto& a : args) {
    // A released constant read as it is needs its bytes back (program-owned).
    materialize(values_[a.second].buffer);
    touch(a.second);
  }
  const size_t scratch = scratchpad.get_size();
  scratchpad_bytes_ = std::max(scratchpad_bytes_, scratch);
  steps_.push_back(Step{p, std::move(args), scratch > 0, label, nullptr, primitive_name(p)});
}

void ProgramBuilder::name_last_step(std::string what) {
  if (!steps_.empty()) steps_.back().what = std::move(what);
}

void ProgramBuilder::set_last_step_threads(int threads) {
  if (!steps_.empty()) steps_.back().threads = threads;
}

void ProgramBuilder::add_reorder(ValueId src, ValueId dst, const std::string& label) {
  dnnl::reorder::primitive_desc pd(engine_, desc(src), engine_, desc(dst), attr());
  add_step(dnnl::reorder(pd), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, pd.scratchpad_desc(), label);
}

void ProgramBuilder::add_host_step(HostFn fn, const std::vector<ValueId>& args, const std::string& label,
                                   const std::string& what) {
  std::vector<std::pair<int, ValueId>> indexed;
  for (ValueId v : args) {
    materialize(values_[v].buffer);
    touch(v);
    indexed.emplace_back(static_cast<int>(indexed.size()), v);
  }
  steps_.push_back(Step{dnnl::primitive(), std::move(indexed), false, label, std::move(fn), what});
}

bool ProgramBuilder::last_step_feeds_caller_alone(size_t step, ValueId dst) const {
  if (step + 1 != steps_.size()) return false;
  const BufferId buffer = values_[dst].buffer;
  if (buffers_[buffer].kind != BufferKind::kArena) return false;
  if (unbuilt_readers(buffer) != size_t{1}) return false;
  for (size_t i = 0; i + 1 < steps_.size(); ++i)
    for (const auto& a : steps_[i].args)
      if (values_[a.second].buffer == buffer) return false;
  return true;
}

void ProgramBuilder::remove_last_step(ValueId dst) {
  buffers_[values_[dst].buffer].bytes = 0;
  steps_.pop_back();
  // Buffers made since that step began their lifetime at the next step
  // index, which is now the caller's step's.
  const int next = static_cast<int>(steps_.size());
  for (Buffer& b : buffers_) {
    b.first_step = std::min(b.first_step, next);
    b.last_step = std::min(b.last_step, next);
  }
}

void ProgramBuilder::set_last_band_conv(BandConv conv) {
  band_conv_ = Recorded<BandConv>{steps_.size() - 1, std::move(conv)};
}

const ProgramBuilder::BandConv* ProgramBuilder::band_conv_writing(ValueId dst) const {
  return recorded_writing(band_conv_, dst);
}

ProgramBuilder::BandConv ProgramBuilder::remove_band_conv_step() { return take_recorded(band_conv_); }

void ProgramBuilder::set_last_band_rows(BandRows rows) {
  band_rows_ = Recorded<BandRows>{steps_.size() - 1, std::move(rows)};
}

const ProgramBuilder::BandRows* ProgramBuilder::band_rows_writing(ValueId dst) const {
  return recorded_writing(band_rows_, dst);
}

ProgramBuilder::BandRows ProgramBuilder::remove_band_rows_step() { return take_recorded(band_rows_); }

ValueId ProgramBuilder::host_input(const std::string& name) {
  if (defined(name)) return value_of(name);
  for (size_t i = 0; i < spec_.inputs.size(); ++i) {
    if (spec_.inputs[i] != name) continue;
    const BuildInput& t = inputs_[i];
    const std::vector<int64_t>& dims = t.dims;
    const size_t bytes = static_cast<size_t>(element_count(dims)) * sdk::dtype_size(t.dtype);
    const dnnl::memory::desc d({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, dnnl::memory::data_type::u8,
                               dnnl::memory::format_tag::a);
    const ValueId v = add_value(d, dims, add_buffer(BufferKind::kInput, i, bytes));
    names_[name] = v;
    return v;
  }
  throw sdk::Error("cpu_onednn: internal: '" + name + "' is not a partition input");
}

void ProgramBuilder::build_nodes() {
  const std::vector<BuildUnit> units = plan_fusion(spec_);
  std::vector<bool> done(units.size(), false);
  size_t remaining = units.size();
  // Units are built once every value they read from outside is defined: a
  // float or 8-bit value, or any value another node of the partition makes
  // (a ConvInteger's int32 result before the Cast reading it). The fusion
  // plan keeps this order acyclic.
  std::set<std::string> made_here;
  for (const NodeSpec& n : spec_.nodes) made_here.insert(n.outputs.begin(), n.outputs.end());
  while (remaining > 0) {
    bool progressed = false;
    for (size_t u = 0; u < units.size(); ++u) {
      if (done[u]) continue;
      const BuildUnit& unit = units[u];
      std::set<std::string> internal;
      bool ready = true;
      auto check = [&](const NodeSpec& n) {
        for (size_t k = 0; k < n.inputs.size(); ++k)
          if (n.has_input(k) && !internal.count(n.inputs[k]) && !defined(n.inputs[k]) &&
              !n.small_constants.count(k) &&
              (n.input_dtypes[k] == LOOM_DTYPE_FLOAT || n.input_dtypes[k] == LOOM_DTYPE_UINT8 ||
               n.input_dtypes[k] == LOOM_DTYPE_INT8 || made_here.count(n.inputs[k])))
            ready = false;
        for (const auto& o : n.outputs) internal.insert(o);
      };
      check(spec_.nodes[unit.node]);
      for (size_t c : unit.chain) check(spec_.nodes[c]);
      if (!ready) continue;

      Chain chain;
      for (size_t c : unit.chain) chain.push_back(&spec_.nodes[c]);
      auto build_one = [&](const NodeSpec& n, const Chain& ch) -> size_t {
        OpBuilderFn fn = op_builder_for(n.op_type);
        if (fn == nullptr) n.fail("no builder for this op");
        try {
          return fn(*this, n, ch);
        } catch (const dnnl::error& e) {
          rethrow_with_context(n, e.what());
        }
      };
      const size_t absorbed = build_one(spec_.nodes[unit.node], chain);
      for (size_t k = absorbed; k < chain.size(); ++k) build_one(*chain[k], {});
      done[u] = true;
      built_[unit.node] = true;
      for (size_t c : unit.chain) built_[c] = true;
      --remaining;
      progressed = true;
    }
    if (!progressed) throw sdk::Error("cpu_onednn: internal: partition nodes could not be ordered");
  }
}

void ProgramBuilder::bind_outputs(std::vector<ProgramOutput>& outputs) {
  for (size_t i = 0; i < spec_.outputs.size(); ++i) {
    const ValueId v = value_of(spec_.outputs[i]);
    const Buffer& b = buffers_[values_[v].buffer];
    // Outputs keep their values' element type: s32 (EmbedLayerNormalization's
    // mask_index), u8 / s8 (quantized ops), else f32.
    const int32_t dtype = loom_dtype_of(desc(v).data_type());
    const dnnl::memory::desc d = plain_desc(dims(v), *dnnl_type_of(dtype));
    if (b.kind == BufferKind::kOutput && b.index == i && desc(v) == d) {
      outputs.push_back({v, dims(v), dtype});
      continue;
    }
    const ValueId out = add_value(d, dims(v), add_buffer(BufferKind::kOutput, i, d.get_size()));
    add_reorder(v, out, "partition output '" + spec_.outputs[i] + "'");
    outputs.push_back({out, dims(v), dtype});
  }
}

size_t ProgramBuilder::plan_arena() {
  // Greedy: largest first, at the lowest offset not used by a buffer whose
  // lifetime overlaps. The scratchpad occupies [0, scratchpad).
  std::vector<BufferId> order;
  for (BufferId b = 0; b < buffers_.size(); ++b)
    if (buffers_[b].kind == BufferKind::kArena) order.push_back(b);
  std::stable_sort(order.begin(), order.end(), [&](BufferId a, BufferId b) { return buffers_[a].bytes > buffers_[b].bytes; });
  const size_t base = align_up(scratchpad_bytes_);
  size_t end = base;
  // Placed buffers by the steps they are alive at, so each buffer meets only
  // those whose lifetimes overlap its own (comparing with every placed
  // buffer made a 200k-node partition's first run quadratic).
  int last_step = 0;
  for (BufferId id : order) last_step = std::max(last_step, buffers_[id].last_step);
  std::vector<std::vector<BufferId>> alive_at(static_cast<size_t>(last_step) + 1);
  std::vector<size_t> met(buffers_.size(), SIZE_MAX);  // last buffer (index in order) that met it
  std::vector<std::pair<size_t, size_t>> busy;
  for (size_t k = 0; k < order.size(); ++k) {
    const BufferId id = order[k];
    Buffer& buf = buffers_[id];
    const int first = std::max(buf.first_step, 0);
    busy.clear();
    for (int s = first; s <= buf.last_step; ++s)
      for (BufferId o : alive_at[static_cast<size_t>(s)])
        if (met[o] != k) {
          met[o] = k;
          busy.emplace_back(buffers_[o].offset, buffers_[o].offset + align_up(buffers_[o].bytes));
        }
    std::sort(busy.begin(), busy.end());
    size_t offset = base;
    for (const auto& [lo, hi] : busy) {
      if (offset + align_up(buf.bytes) <= lo) break;
      offset = std::max(offset, hi);
    }
    buf.offset = offset;
    end = std::max(end, offset + align_up(buf.bytes));
    for (int s = first; s <= buf.last_step; ++s) alive_at[static_cast<size_t>(s)].push_back(id);
  }
  return end;
}

std::shared_ptr<Program> ProgramBuilder::build() {
  try {
    return build_program();
  } catch (...) {
    // What the host was not told of stays the host's.
    for (size_t input : pending_) constants_.released.erase(input);
    pending_.clear();
    throw;
  }
}

std::shared_ptr<Program> ProgramBuilder::build_program() {
  build_nodes();
  std::vector<ProgramOutput> outputs;
  bind_outputs(outputs);
  // Constant inputs this program reads as they are each run: never released
  // by later programs, nor by this one where a step after the packing
  // reads the original.
  for (const Step& s : steps_)
    for (const auto& a : s.args) {
      const Buffer& b = buffers_[values_[a.second].buffer];
      if (b.kind == BufferKind::kInput && spec_.input_is_constant[b.index]) constants_.read_at_run_time.insert(b.index);
    }
  for (size_t input : pending_) {
    if (constants_.read_at_run_time.count(input)) constants_.released.erase(input);
    else release_(input);
  }
  pending_.clear();
  const size_t arena = plan_arena();
  return std::make_shared<Program>(engine_, std::move(buffers_), std::move(values_), std::move(steps_),
                                   std::move(outputs), arena, scratchpad_bytes_);
}

}  // namespace loom::onednn
