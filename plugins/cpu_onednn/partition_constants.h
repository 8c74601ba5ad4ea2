// What a compiled partition knows about its constant inputs (initializers)
// across the programs it builds for different input shapes. Once a weight
// is packed, the host's copy is released (LOOM_HostApi::
// kernel_release_constant_input, as ONNX Runtime frees prepacked weights),
// so later programs rebuild the original bytes from the packed copy when
// they need them. A constant some program reads at run time as it is is
// never released. Guarded by the partition's build mutex.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <map>
#include <set>

namespace loom::onednn {

struct ReleasedConstant {
  dnnl::memory packed;             // kept alive here and by the program that packed it
  dnnl::memory::desc source_desc;  // the input's bytes as the packing reorder read them
  size_t bytes = 0;                // size of the input
};

struct PartitionConstants {
  std::map<size_t, ReleasedConstant> released;  // by partition input index
  std::set<size_t> read_at_run_time;            // never released
};

}  // namespace loom::onednn
