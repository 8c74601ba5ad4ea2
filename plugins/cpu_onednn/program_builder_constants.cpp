// The program builder's constants: their bytes while building, the packed
// copies steps read, and telling the host which originals it may free
// (see ProgramBuilder's constructor for when).
#include "program_builder.h"

namespace loom::onednn {

std::vector<float> ProgramBuilder::constant_data(ValueId v) {
  materialize(values_[v].buffer);
  const ValueId p = require(v, plain_desc(dims(v)));  // converted to f32 once (packed) when of another type
  const Buffer& b = buffers_[values_[p].buffer];
  const float* data = b.kind == BufferKind::kPacked ? static_cast<const float*>(b.packed.get_data_handle())
                                                    : static_cast<const float*>(input_bytes(b.index));
  return std::vector<float>(data, data + element_count(values_[p].dims));
}

void ProgramBuilder::materialize(BufferId b) {
  Buffer& buf = buffers_[b];
  if (buf.kind != BufferKind::kInput) return;
  auto r = constants_.released.find(buf.index);
  if (r == constants_.released.end()) return;
  const ReleasedConstant& rc = r->second;
  dnnl::memory plain(dnnl::memory::desc({static_cast<int64_t>(rc.bytes)}, dnnl::memory::data_type::u8,
                                        dnnl::memory::format_tag::a),
                     engine_);
  dnnl::memory view(rc.source_desc, engine_, plain.get_data_handle());
  dnnl::memory packed = rc.packed;
  dnnl::stream s(engine_);
  dnnl::reorder(packed, view).execute(s, packed, view);
  s.wait();
  buf.kind = BufferKind::kPacked;
  buf.packed = plain;
}

// After `source` (a constant input, or a view of one) was packed into
// `packed`: record the packed copy and tell the host it may free its own,
// unless some program of this partition reads that input as it is at run
// time (such reads would then see no data).
void ProgramBuilder::release_if_packed_only(ValueId source, BufferId packed) {
  const Buffer& src = buffers_[values_[source].buffer];
  if (src.kind != BufferKind::kInput || !spec_.input_is_constant[src.index]) return;
  const size_t input = src.index;
  if (constants_.released.count(input) || constants_.read_at_run_time.count(input)) return;
  for (const Step& s : steps_)
    for (const auto& a : s.args) {
      const Buffer& b = buffers_[values_[a.second].buffer];
      if (b.kind == BufferKind::kInput && b.index == input) return;  // read as it is by this program
    }
  // Only layouts oneDNN can turn back into the original bytes (not
  // Winograd's transformed weights, for one).
  try {
    dnnl::reorder::primitive_desc back(engine_, buffers_[packed].packed.get_desc(), engine_, values_[source].desc);
  } catch (const dnnl::error&) {
    return;
  }
  constants_.released[input] = {buffers_[packed].packed, values_[source].desc, src.bytes};
  auto readers = readers_.find(spec_.inputs[input]);
  if (!may_decline_ && readers != readers_.end() && readers->second.size() == 1) release_(input);
  else pending_.push_back(input);
}

const void* ProgramBuilder::input_bytes(size_t i) const {
  if (i >= inputs_.size() || !inputs_[i].bytes.exists())
    throw sdk::Error("cpu_onednn: internal: the bytes of input '" + spec_.inputs.at(i) + "' are not known while building");
  return inputs_[i].bytes.raw_data();
}

ValueId ProgramBuilder::pack(ValueId v, const dnnl::memory::desc& desc) {
  for (const PackedCopy& p : packed_)
    if (p.source == v && p.desc == desc) return p.packed;
  materialize(values_[v].buffer);
  const Buffer& src_buffer = buffers_[values_[v].buffer];
  void* src_data = src_buffer.kind == BufferKind::kPacked ? src_buffer.packed.get_data_handle()
                                                         : const_cast<void*>(input_bytes(src_buffer.index));
  dnnl::memory src(values_[v].desc, engine_, src_data);
  const BufferId b = add_buffer(BufferKind::kPacked, 0, desc.get_size());
  buffers_[b].packed = dnnl::memory(desc, engine_);
  dnnl::stream s(engine_);
  dnnl::reorder(src, buffers_[b].packed).execute(s, src, buffers_[b].packed);
  s.wait();
  const ValueId packed = add_value(desc, values_[v].dims, b);
  packed_.push_back({v, desc, packed});
  release_if_packed_only(v, b);
  return packed;
}

}  // namespace loom::onednn
