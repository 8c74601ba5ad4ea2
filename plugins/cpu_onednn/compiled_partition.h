// A claimed subgraph compiled for oneDNN. Programs are built lazily, on the
// first compute with a new tuple of input shapes, and cached by those shapes;
// later computes with the same shapes reuse primitives and packed weights.
// compute() may run concurrently on different run states: the cache is
// mutex-protected and each execution borrows its own arena.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ep_options.h"
#include "partition_constants.h"
#include "loom/sdk.h"
#include "partition_spec.h"
#include "program.h"

namespace loom::onednn {

class OnednnPartition : public sdk::CompiledPartition {
 public:
  // options.threads: OpenMP threads for oneDNN calls from the computing thread.
  OnednnPartition(PartitionSpec spec, dnnl::engine engine, EpOptions options);
  void compute(void* run_state, sdk::KernelContext& ctx) override;

 private:
  // The program for this run's input shapes (and runtime Resize parameters),
  // built on first use; throws NOT_IMPLEMENTED for inputs it declined.
  std::shared_ptr<const Program> program_for(sdk::KernelContext& ctx);
  // Caches `program` (NULL: declined, for the reason `declined`) under `key`,
  // dropping the least recently used entry when full. Under mutex_.
  void remember(std::vector<std::vector<int64_t>> key, std::shared_ptr<const Program> program, std::string declined);

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
  std::map<std::vector<std::vector<int64_t>>, CachedProgram> cache_;
  uint64_t use_clock_ = 0;
  PartitionConstants constants_;  // guarded by mutex_
};

}  // namespace loom::onednn
