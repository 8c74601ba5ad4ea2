// A claimed subgraph compiled for oneDNN. Programs are built lazily, on the
// first compute with a new tuple of input shapes, and cached by those shapes;
// later computes with the same shapes reuse primitives and packed weights.
// compute() may run concurrently on different run states: the cache is
// mutex-protected and each execution borrows its own arena.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
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

// Process-wide counters, exported for tests (see onednn_plugin.cpp).
struct Counters {
  std::atomic<uint64_t> programs_built{0};
  std::atomic<uint64_t> partition_runs{0};
  std::atomic<uint64_t> winograd_convolutions{0};  // convolution steps built with Winograd
  std::atomic<uint64_t> released_constants{0};     // constant inputs whose host copy was released
  // int8 convolution steps built with a quantized residual (DQ -> Add -> Q)
  // as post-ops (ops/qlinear_conv.cpp)
  std::atomic<uint64_t> quantized_residuals{0};
  // single-row matrix products built as GEMV host steps (ops/gemv.h)
  std::atomic<uint64_t> gemv_steps{0};
  // depthwise 3x3 convolutions built as host steps (ops/depthwise.h)
  std::atomic<uint64_t> depthwise_steps{0};
  // of those, the ones fed band by band by the 1x1 convolution before them
  // (oneDNN's or the expansion step's)
  std::atomic<uint64_t> banded_depthwise_steps{0};
  // 1x1 convolutions with 16k + 8 (or 16) output channels built as host
  // steps (ops/narrow_pointwise.h)
  std::atomic<uint64_t> narrow_pointwise_steps{0};
  // of those, the ones computing the depthwise step before them row band
  // by row band instead of reading its whole output
  std::atomic<uint64_t> row_fed_pointwise_steps{0};
  // 1x1 convolutions with at most 64 input channels and a multiple of 16
  // output channels (expansions) built as host steps (ops/narrow_pointwise.h)
  std::atomic<uint64_t> expand_pointwise_steps{0};
  // 1x1 convolutions on at most 256 pixels with a multiple of 32 output
  // channels built as host steps (ops/narrow_pointwise.h)
  std::atomic<uint64_t> small_map_pointwise_steps{0};
};
Counters& counters();

class OnednnPartition : public sdk::CompiledPartition {
 public:
  // options.threads: OpenMP threads for oneDNN calls from the computing thread.
  OnednnPartition(PartitionSpec spec, dnnl::engine engine, EpOptions options);
  void compute(void* run_state, sdk::KernelContext& ctx) override;

 private:
  std::shared_ptr<const Program> program_for(sdk::KernelContext& ctx);

  PartitionSpec spec_;
  dnnl::engine engine_;
  EpOptions options_;
  std::mutex mutex_;
  struct CachedProgram {
    std::shared_ptr<const Program> program;
    uint64_t last_use = 0;
  };
  // By input shapes; at most options_.program_cache_size, least recently
  // used dropped first (runs still executing one keep it alive).
  std::map<std::vector<std::vector<int64_t>>, CachedProgram> cache_;
  uint64_t use_clock_ = 0;
  PartitionConstants constants_;  // guarded by mutex_
};

}  // namespace loom::onednn
