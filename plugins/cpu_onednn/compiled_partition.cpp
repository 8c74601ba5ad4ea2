#include "compiled_partition.h"

#include <omp.h>

#include <cstring>

#include "pattern_fusion.h"
#include "program_builder.h"
#include "skip_layer_norm_split.h"
#include "thread_count.h"

namespace loom::onednn {

namespace {

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

// "[1,3,224,224] [1,10]": the shapes of the inputs that vary (constants
// keep theirs), for the profile part of a build.
std::string varying_shapes(const PartitionSpec& spec, const BuildInputs& inputs) {
  std::string shapes;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    if (spec.input_is_constant[i]) continue;
    shapes += shapes.empty() ? "[" : " [";
    for (size_t d = 0; d < inputs[i].dims.size(); ++d) shapes += (d ? "," : "") + std::to_string(inputs[i].dims[d]);
    shapes += "]";
  }
  return shapes;
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

std::vector<int64_t> OnednnPartition::key_part(size_t i, bool exists, std::vector<int64_t> dims,
                                               const sdk::ConstTensor& bytes) const {
  if (!exists) return {-1};
  // A Resize's scales / sizes the model computes shape the program too.
  if (bytes.exists() && !spec_.input_is_constant[i] && spec_.parameter_only(spec_.inputs[i]))
    append_values(bytes, dims);
  return dims;
}

void OnednnPartition::build_at_compile(const sdk::Graph& graph) {
  const std::optional<BuildInputs> inputs = build_inputs_at_compile(spec_, graph);
  if (!inputs) return;
  // oneDNN sizes a primitive's parallel work when it is created: the
  // thread count compute() runs it with, for this call only (the creating
  // thread is the caller's).
  const ThreadCount threads(options_.threads);
  Key key;
  for (size_t i = 0; i < inputs->size(); ++i) {
    const BuildInput& in = (*inputs)[i];
    key.push_back(key_part(i, in.exists, in.dims, in.bytes));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    build(std::move(key), *inputs, [&graph](size_t i) { graph.release_constant_input(i); });
  } catch (const sdk::Error& e) {
    if (e.code() != LOOM_STATUS_NOT_IMPLEMENTED) throw;  // declined: remembered, runs go to the fallback
  }
}

std::shared_ptr<const Program> OnednnPartition::build(Key key, const BuildInputs& inputs,
                                                      const ProgramBuilder::ReleaseFn& release) {
  for (size_t i = 0; i < key.size(); ++i)
    for (int64_t d : key[i])
      if (d == 0 && !spec_.parameter_only(spec_.inputs[i]))
        throw sdk::Error("cpu_onednn: empty (zero-sized) inputs are not supported", LOOM_STATUS_NOT_IMPLEMENTED);
  std::shared_ptr<const Program> program;
  try {
    program = ProgramBuilder(engine_, spec_, inputs, options_, constants_, release).build();
  } catch (const sdk::Error& e) {
    // Inputs this EP declines (values oneDNN does not match): the host
    // runs the partition on its fallback provider, now and on later runs
    // with these inputs, without building again.
    if (e.code() != LOOM_STATUS_NOT_IMPLEMENTED) throw;
    remember(std::move(key), nullptr, e.what());
    throw;
  }
  remember(std::move(key), program, {});
  return program;
}

std::shared_ptr<const Program> OnednnPartition::program_for(sdk::KernelContext& ctx) {
  Key key;
  key.reserve(spec_.inputs.size());
  for (size_t i = 0; i < spec_.inputs.size(); ++i) {
    const sdk::ConstTensor t = ctx.input(i);
    key.push_back(key_part(i, t.exists(), t.exists() ? t.shape() : std::vector<int64_t>{}, t));
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
  // A new shape: its inputs as the builder reads them (made only here, off
  // the path of runs that find their program).
  const BuildInputs inputs = build_inputs_of(ctx, spec_.inputs.size());
  // Profiles show the compilation a new shape costs, and for which shapes.
  sdk::ProfilePart part(ctx, [&] { return "build program: " + varying_shapes(spec_, inputs); });
  return build(std::move(key), inputs, [&ctx](size_t i) { ctx.release_constant_input(i); });
}

void OnednnPartition::remember(Key key, std::shared_ptr<const Program> program, std::string declined) {
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
