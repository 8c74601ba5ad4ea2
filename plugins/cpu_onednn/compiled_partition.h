// A claimed subgraph compiled for oneDNN. When compile time knows every
// input's shape, the program for those shapes is built then, with the
// weights packed (the host frees its copies before any run:
// graph_release_constant_input);
// other programs are built on the first compute with a new tuple of input
// shapes. Programs are cached by those shapes; later computes with the same
// shapes reuse primitives and packed weights. compute() may run
// concurrently on different run states: the cache is mutex-protected and
// each execution borrows its own arena.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "build_inputs.h"
#include "ep_options.h"
#include "partition_constants.h"
#include "loom/sdk.h"
#include "partition_spec.h"
#include "program.h"
#include "program_builder.h"

namespace loom::onednn {

class OnednnPartition : public sdk::CompiledPartition {
 public:
  // options.threads: OpenMP threads for oneDNN calls from the computing thread.
  OnednnPartition(PartitionSpec spec, dnnl::engine engine, EpOptions options);
  // Builds the program for the shapes compile time knows (see
  // build_inputs_at_compile), from `graph`, the subgraph being compiled.
  // Inputs oneDNN declines are remembered as at run time; other errors
  // throw, failing session creation.
  void build_at_compile(const sdk::Graph& graph);
  void compute(void* run_state, sdk::KernelContext& ctx) override;

 private:
  using Key = std::vector<std::vector<int64_t>>;
  // Input i's part of the cache key: its dims ({-1} when omitted), then the
  // values `bytes` hold when it is a run-time input read as a parameter (a
  // Resize's sizes).
  std::vector<int64_t> key_part(size_t i, bool exists, std::vector<int64_t> dims, const sdk::ConstTensor& bytes) const;
  // Builds and caches the program for `inputs` (under mutex_); throws
  // NOT_IMPLEMENTED for inputs it declines, remembering them.
  std::shared_ptr<const Program> build(Key key, const BuildInputs& inputs, const ProgramBuilder::ReleaseFn& release);
  // The program for this run's input shapes (and runtime Resize parameters),
  // built on first use; throws NOT_IMPLEMENTED for inputs it declined.
  std::shared_ptr<const Program> program_for(sdk::KernelContext& ctx);
  // Caches `program` (NULL: declined, for the reason `declined`) under `key`,
  // dropping the least recently used entry when full. Under mutex_.
  void remember(Key key, std::shared_ptr<const Program> program, std::string declined);

  PartitionSpec spec_;
  dnnl::engine engine_;
  EpOptions options_;
  std::mutex mutex_;
  struct CachedProgram {
    std::shared_ptr<const Program> program;  // NULL: declined
    uint64_t last_use = 0;
    std::string declined;
  };
  // By input shapes; at most options_.program_cache_size, least recently
  // used dropped first (runs still executing one keep it alive).
  std::map<Key, CachedProgram> cache_;
  uint64_t use_clock_ = 0;
  PartitionConstants constants_;  // guarded by mutex_
};

}  // namespace loom::onednn
