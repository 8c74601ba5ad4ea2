// Builds a Program for one partition and one tuple of input shapes. Op
// builders (ops/*.cpp) create primitives through it; it tracks every value's
// memory descriptor, inserts reorders only where a primitive needs another
// layout, packs constant inputs once, and plans the arena.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "build_inputs.h"
#include "ep_options.h"
#include "partition_constants.h"
#include "partition_spec.h"
#include "program.h"

namespace loom::onednn {

// Row-major desc for ONNX dims (scalars become {1}).
dnnl::memory::desc plain_desc(const std::vector<int64_t>& dims,
                              dnnl::memory::data_type type = dnnl::memory::data_type::f32);
int64_t element_count(const std::vector<int64_t>& dims);
// The oneDNN type of tensors of a Loom element type this EP holds as values
// (float32, uint8, int8, int32); nullopt for any other.
std::optional<dnnl::memory::data_type> dnnl_type_of(int32_t loom_dtype);
// The Loom element type of values of a oneDNN type (float32, uint8, int8, int32).
int32_t loom_dtype_of(dnnl::memory::data_type type);

class ProgramBuilder {
 public:
  // Tells the host that the partition no longer needs the bytes of constant
  // input `index` (kernel_release_constant_input at run time,
  // graph_release_constant_input at compile time).
  using ReleaseFn = std::function<void(size_t index)>;
  // `constants` is the partition's record of released weights (updated
  // while building; the caller holds the partition's build lock).
  // `inputs` live as long as the builder. `release` hears of each packed
  // constant input no program reads as it is: at once, while building, for
  // a weight one node reads in a partition whose builds cannot decline
  // (so packing weight after weight never holds them all twice); else
  // once the build has succeeded.
  ProgramBuilder(const dnnl::engine& engine, const PartitionSpec& spec, const BuildInputs& inputs,
                 const EpOptions& options, PartitionConstants& constants, ReleaseFn release);

  // The program. On a throw, the partition's record keeps only what the
  // host was already told it may free.
  std::shared_ptr<Program> build();
  const EpOptions& options() const { return options_; }
  // The partition and the inputs this program is built for (builders read
  // the values of small runtime inputs, a Resize's sizes, from them).
  const PartitionSpec& spec() const { return spec_; }
  const BuildInput& input(size_t i) const { return inputs_[i]; }

  // --- values ---
  bool defined(const std::string& name) const { return names_.count(name) > 0; }
  ValueId value_of(const std::string& name) const;
  const Value& value(ValueId v) const { return values_[v]; }
  const std::vector<int64_t>& dims(ValueId v) const { return values_[v].dims; }
  const dnnl::memory::desc& desc(ValueId v) const { return values_[v].desc; }
  void define(const std::string& name, ValueId v) { names_[name] = v; }
  // Whether the value's bytes are fixed for the program's lifetime.
  bool is_constant(ValueId v) const;
  // Whether the value was computed by a step of this program (its layout is
  // one a primitive chose), rather than a partition input or a constant.
  bool produced_here(ValueId v) const {
    const BufferKind k = buffers_[values_[v].buffer].kind;
    return k == BufferKind::kArena || k == BufferKind::kOutput;
  }
  // Whether two values share bytes (one is an alias / view of the other).
  bool same_buffer(ValueId a, ValueId b) const { return values_[a].buffer == values_[b].buffer; }
  // Whether the step built for `reader` may overwrite `v`'s bytes in place:
  // they are an intermediate in the arena, and no value on the same buffer is
  // a partition output or read by any node other than `reader` that is not
  // built yet (the anchor of `reader`'s unit counts as not built).
  bool can_overwrite(ValueId v, const NodeSpec& reader) const;
  // A constant value's elements as plain float data (converted from its
  // element type), readable now (at build time).
  std::vector<float> constant_data(ValueId v);

  // A new intermediate holding `desc`. When `name` is a partition output and
  // the layout is plain, the value is written straight into the output.
  ValueId new_value(const dnnl::memory::desc& desc, const std::vector<int64_t>& dims, const std::string& name = "");
  // A constant built from data (plain layout), e.g. scaled weights.
  ValueId new_constant(const std::vector<float>& data, const std::vector<int64_t>& dims);
  // A constant of desc.get_size() bytes copied from `data` (any type and
  // layout), e.g. an s32 zero point passed to a primitive at run time.
  ValueId new_constant(const void* data, const dnnl::memory::desc& desc, const std::vector<int64_t>& dims);
  // Same bytes, another descriptor (the caller guarantees it fits).
  ValueId alias(ValueId v, const dnnl::memory::desc& desc, const std::vector<int64_t>& dims);
  // The value in `desc`: itself when it already is, else a reorder (done once,
  // now, for constants).
  ValueId require(ValueId v, const dnnl::memory::desc& desc);
  // The value in plain row-major layout, keeping its element type.
  ValueId plain(ValueId v) { return require(v, plain_desc(dims(v), desc(v).data_type())); }
  // The value as plain data (same element type) with other dims of the same element count.
  ValueId view(ValueId v, const std::vector<int64_t>& new_dims);

  // --- steps ---
  // Primitive attributes every builder starts from (user-managed scratchpad).
  dnnl::primitive_attr attr() const;
  void add_step(const dnnl::primitive& p, std::vector<std::pair<int, ValueId>> args,
                const dnnl::memory::desc& scratchpad, const std::string& label);
  // Appends a reorder src -> dst (both existing values).
  void add_reorder(ValueId src, ValueId dst, const std::string& label);
  // Appends a host step (see HostFn in program.h for its contract) reading
  // and writing `args` (plain layouts: the caller requires them first).
  // `what` names the host kernel in profiles (Step::what).
  void add_host_step(HostFn fn, const std::vector<ValueId>& args, const std::string& label,
                     const std::string& what = "host");
  // Renames what the last step runs (Step::what): a builder that chose an
  // implementation says which ("convolution winograd").
  void name_last_step(std::string what);
  // The last step runs on `threads` OpenMP threads (Step::threads); its
  // primitive must have been created with that many (a ThreadCount).
  void set_last_step_threads(int threads);
  // Partition input `name` of any element type for host steps: its value
  // when already defined (float, int32), else raw bytes (a u8 desc; dims
  // are the logical ONNX dims). Throws when `name` is no partition input.
  ValueId host_input(const std::string& name);
  const dnnl::engine& engine() const { return engine_; }

  // --- row bands ---
  // A convolution whose output rows can be computed band by band, each band
  // from the same rows of its input alone: 1x1, stride 1, no padding, batch
  // 1, f32 channels-last src and dst, post-ops that read no other tensor.
  // A later step may run it band by band into a small buffer that stays in
  // cache instead of writing the whole map (see ops/depthwise.h).
  struct BandConv {
    ValueId src = 0, weights = 0, dst = 0;
    std::optional<ValueId> bias;
    // The same convolution (same packed weights and post-ops) on `rows`
    // rows: throws dnnl::error when oneDNN has no such primitive. Callers
    // check that it got `impl`, the full convolution's implementation.
    std::function<dnnl::convolution_forward::primitive_desc(int64_t rows)> make;
    std::string impl;
    std::string label;
  };
  // Records that the step just added is `conv`.
  void set_last_band_conv(BandConv conv);
  // The recorded band convolution when it is the last step, writes `dst`,
  // and the one node not yet built that reads dst (through any name) is the
  // caller's; else nullptr.
  const BandConv* band_conv_writing(ValueId dst) const;
  // Removes that convolution's step (band_conv_writing returned it) and
  // returns the convolution: dst then gets no bytes, the caller's step
  // computes it band by band.
  BandConv remove_band_conv_step();

  // A host step whose output rows (numbered over the batch, channels-last)
  // can be computed any few at a time: a later host step may call `rows` for
  // the band it is about to read, into a small buffer that stays in cache,
  // instead of the whole output being written first (see
  // ops/narrow_pointwise.h).
  struct BandRows {
    ValueId dst = 0;
    std::vector<ValueId> args;  // the values `rows` reads, in this order
    // Writes dst's rows [r0, r1) to `out` (row r0 first), reading `args`'
    // memories from `memories` on; called by several threads at once on
    // disjoint rows.
    std::function<void(const dnnl::memory* memories, float* out, int64_t r0, int64_t r1)> rows;
    int64_t row_count = 0, row_floats = 0;
    std::string label;
  };
  // As for band convolutions: record, find (last step, writes dst, the
  // caller's node its one unbuilt reader), remove.
  void set_last_band_rows(BandRows rows);
  const BandRows* band_rows_writing(ValueId dst) const;
  BandRows remove_band_rows_step();

  bool is_partition_output(const std::string& name) const { return outputs_.count(name) > 0; }

 private:
  ValueId add_value(const dnnl::memory::desc& desc, const std::vector<int64_t>& dims, BufferId buffer);
  BufferId add_buffer(BufferKind kind, size_t index, size_t bytes);
  void touch(ValueId v);
  // Nodes not yet built that read `buffer` through any name, `except` one
  // node index; nullopt when a name on it is a partition output.
  std::optional<size_t> unbuilt_readers(BufferId buffer, std::optional<size_t> except = std::nullopt) const;
  ValueId pack(ValueId v, const dnnl::memory::desc& desc);
  // A released constant input's buffer becomes a program-owned copy of the
  // original bytes, rebuilt from the packed copy (no-op for other buffers).
  void materialize(BufferId b);
  void release_if_packed_only(ValueId source, BufferId packed);
  // The bytes of partition input `i` (a constant), readable while building.
  const void* input_bytes(size_t i) const;
  std::shared_ptr<Program> build_program();
  void build_nodes();
  void bind_outputs(std::vector<ProgramOutput>& outputs);
  size_t plan_arena();

  dnnl::engine engine_;
  const PartitionSpec& spec_;
  const BuildInputs& inputs_;
  EpOptions options_;
  PartitionConstants& constants_;
  ReleaseFn release_;
  // Whether some node's builder may decline this build's inputs
  // (NOT_IMPLEMENTED): the host must then keep every original until the
  // build has succeeded, as the fallback provider reads them.
  bool may_decline_ = false;
  std::vector<size_t> pending_;  // packed this build, recorded in constants_.released, the host not yet told
  std::map<std::string, size_t> outputs_;  // partition output name -> index
  std::set<size_t> output_taken_;
  std::map<std::string, ValueId> names_;
  std::map<std::string, std::vector<size_t>> readers_;  // value name -> indices of nodes reading it
  std::vector<bool> built_;                               // per node: its unit is fully built
  std::vector<Buffer> buffers_;
  std::vector<Value> values_;
  std::vector<Step> steps_;
  struct PackedCopy {
    ValueId source;
    dnnl::memory::desc desc;
    ValueId packed;
  };
  std::vector<PackedCopy> packed_;  // constants already reordered, reused by later steps
  size_t scratchpad_bytes_ = 0;
  // Whether step `step` is the last, writes `dst` to the arena, and the
  // caller's node is the one unbuilt reader of dst (through any name).
  bool last_step_feeds_caller_alone(size_t step, ValueId dst) const;
  // Drops the last step, which wrote `dst`: dst gets no bytes.
  void remove_last_step(ValueId dst);
  // A band producer (BandConv, BandRows) and the index of its step.
  template <class Band>
  struct Recorded {
    size_t step;
    Band band;
  };
  // The recorded producer when it writes `dst` and last_step_feeds_caller_alone.
  template <class Band>
  const Band* recorded_writing(const std::optional<Recorded<Band>>& r, ValueId dst) const {
    return r && r->band.dst == dst && last_step_feeds_caller_alone(r->step, dst) ? &r->band : nullptr;
  }
  // Takes the recorded producer and removes its step. Its work goes on
  // inside the consumer's step: its label now says what it was
  // ("pointwise expand <node>"), for profiles and errors.
  template <class Band>
  Band take_recorded(std::optional<Recorded<Band>>& r) {
    Band band = std::move(r->band);
    if (r->step < steps_.size()) band.label = steps_[r->step].what + " " + band.label;
    r.reset();
    remove_last_step(band.dst);
    return band;
  }
  std::optional<Recorded<BandConv>> band_conv_;
  std::optional<Recorded<BandRows>> band_rows_;
};

}  // namespace loom::onednn
