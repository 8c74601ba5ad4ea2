#include "compiled_partition.h"

#include <omp.h>

#include "pattern_fusion.h"
#include "program_builder.h"
#include "skip_layer_norm_split.h"

namespace loom::onednn {

namespace {

// An input read only as an attribute-like parameter (Resize / Upsample roi,
// scales, sizes, taken from the node snapshot), never as a tensor of a step:
// it may be empty (an omitted roi / scales is often a 0-element initializer).
bool parameter_only(const PartitionSpec& spec, const std::string& name) {
  for (const NodeSpec& n : spec.nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] == name && !(k >= 1 && (n.op_type == "Resize" || n.op_type == "Upsample"))) return false;
  return true;
}

}  // namespace

OnednnPartition::OnednnPartition(PartitionSpec spec, dnnl::engine engine, EpOptions options)
    : spec_(std::move(spec)), engine_(std::move(engine)), options_(options) {
  // Once per partition, before any program is planned from the spec.
  fuse_quantized_max_pool_patterns(spec_);
  fuse_hardswish_patterns(spec_);
  fuse_mish_patterns(spec_);
  split_skip_layer_norms(spec_);
}

std::shared_ptr<const Program> OnednnPartition::program_for(sdk::KernelContext& ctx) {
  std::vector<std::vector<int64_t>> key;
  key.reserve(spec_.inputs.size());
  for (size_t i = 0; i < spec_.inputs.size(); ++i) {
    sdk::ConstTensor t = ctx.input(i);
    key.push_back(t.exists() ? t.shape() : std::vector<int64_t>{-1});
  }
  // Built under the lock: a shape is built once even when several runs
  // meet it at the same time (they would otherwise each build it).
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    it->second.last_use = ++use_clock_;
    return it->second.program;
  }
  for (size_t i = 0; i < key.size(); ++i)
    for (int64_t d : key[i])
      if (d == 0 && !parameter_only(spec_, spec_.inputs[i])) throw sdk::Error("cpu_onednn: empty (zero-sized) inputs are not supported", LOOM_STATUS_NOT_IMPLEMENTED);
  std::shared_ptr<const Program> program;
  {
    // Profiles show the compilation a new shape costs, and which shape.
    sdk::ProfilePart part(ctx, [&] {
      std::string shapes;
      for (const std::vector<int64_t>& dims : key) {
        shapes += shapes.empty() ? "[" : " [";
        for (size_t d = 0; d < dims.size(); ++d) shapes += (d ? "," : "") + std::to_string(dims[d]);
        shapes += "]";
      }
      return "build program: " + shapes;
    });
    program = ProgramBuilder(engine_, spec_, ctx, options_, constants_).build();
  }
  if (cache_.size() >= options_.program_cache_size) {
    auto oldest = cache_.begin();
    for (auto c = cache_.begin(); c != cache_.end(); ++c)
      if (c->second.last_use < oldest->second.last_use) oldest = c;
    cache_.erase(oldest);
  }
  cache_.emplace(std::move(key), CachedProgram{program, ++use_clock_});
  return program;
}

void OnednnPartition::compute(void*, sdk::KernelContext& ctx) {
  // oneDNN's OpenMP build sizes its parallel regions from the calling
  // thread's ICV; set it before creating and before executing primitives.
  if (omp_get_max_threads() != options_.threads) omp_set_num_threads(options_.threads);
  program_for(ctx)->execute(ctx);
}

}  // namespace loom::onednn
