#include "compiled_partition.h"

#include <omp.h>

#include <cstring>

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

// Appends the values of a small numeric tensor to a cache key (by their
// bits as doubles, as the builder reads them), after a -2 that no dimension
// takes.
void append_values(const sdk::ConstTensor& t, std::vector<int64_t>& key) {
  if (t.size() > 8) return;
  const std::optional<std::vector<double>> values = numbers_of(t);
  if (!values) return;
  key.push_back(-2);
  for (double v : *values) {
    int64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    key.push_back(bits);
  }
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
    // A Resize's scales / sizes the model computes shape the program too.
    if (t.exists() && !spec_.input_is_constant[i] && parameter_only(spec_, spec_.inputs[i])) append_values(t, key.back());
  }
  // Built under the lock: a shape is built once even when several runs
  // meet it at the same time (they would otherwise each build it).
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    it->second.last_use = ++use_clock_;
    if (it->second.program == nullptr) throw sdk::Error(it->second.declined, LOOM_STATUS_NOT_IMPLEMENTED);
    return it->second.program;
  }
  for (size_t i = 0; i < key.size(); ++i)
    for (int64_t d : key[i])
      if (d == 0 && !parameter_only(spec_, spec_.inputs[i])) throw sdk::Error("cpu_onednn: empty (zero-sized) inputs are not supported", LOOM_STATUS_NOT_IMPLEMENTED);
  std::shared_ptr<const Program> program;
  {
    // Profiles show the compilation a new shape costs, and which shapes
    // (of the inputs that vary: constants keep theirs).
    sdk::ProfilePart part(ctx, [&] {
      std::string shapes;
      for (size_t i = 0; i < spec_.inputs.size(); ++i) {
        if (spec_.input_is_constant[i]) continue;
        const sdk::ConstTensor t = ctx.input(i);
        const std::vector<int64_t> dims = t.exists() ? t.shape() : std::vector<int64_t>{};
        shapes += shapes.empty() ? "[" : " [";
        for (size_t d = 0; d < dims.size(); ++d) shapes += (d ? "," : "") + std::to_string(dims[d]);
        shapes += "]";
      }
      return "build program: " + shapes;
    });
    try {
      program = ProgramBuilder(engine_, spec_, ctx, options_, constants_).build();
    } catch (const sdk::Error& e) {
      // Inputs this EP declines (values oneDNN does not match): the host
      // runs the partition on its fallback provider, now and on later runs
      // with these inputs, without building again.
      if (e.code() != LOOM_STATUS_NOT_IMPLEMENTED) throw;
      remember(std::move(key), nullptr, e.what());
      throw;
    }
  }
  remember(std::move(key), program, {});
  return program;
}

void OnednnPartition::remember(std::vector<std::vector<int64_t>> key, std::shared_ptr<const Program> program,
                               std::string declined) {
  if (cache_.size() >= options_.program_cache_size) {
    auto oldest = cache_.begin();
    for (auto c = cache_.begin(); c != cache_.end(); ++c)
      if (c->second.last_use < oldest->second.last_use) oldest = c;
    cache_.erase(oldest);
  }
  cache_.emplace(std::move(key), CachedProgram{std::move(program), ++use_clock_, std::move(declined)});
}

void OnednnPartition::compute(void*, sdk::KernelContext& ctx) {
  // oneDNN's OpenMP build sizes its parallel regions from the calling
  // thread's ICV; set it before creating and before executing primitives.
  if (omp_get_max_threads() != options_.threads) omp_set_num_threads(options_.threads);
  program_for(ctx)->execute(ctx);
}

}  // namespace loom::onednn
