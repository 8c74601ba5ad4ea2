// The cpu_onednn plugin's entry library. It exists for one reason: OpenMP
// reads its wait policy once, when libgomp loads, and libgomp loads with
// oneDNN. By default idle OpenMP threads spin for a long time (GOMP_SPINCOUNT
// 300000), which burns CPU between runs and, when the machine is busy, makes
// barriers wait on descheduled spinners: on 2 contended cores ResNet-50 at 2
// threads went from 76 ms (passive) to a 394 ms median with spinning. So this
// library bounds the spin before loading the real plugin, unless the user
// chose a policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT set), then forwards the
// entry call. It links nothing but libc.
#include <cstdlib>

#include "common/implementation_loader.h"

namespace {

// Spin iterations before sleeping: tens of microseconds, enough to bridge the
// gaps between consecutive primitives of one run, not the gaps between runs.
constexpr char kBoundedSpinCount[] = "10000";
constexpr char kImplementation[] = "cpu_onednn/libloom_cpu_onednn_impl.so";

}  // namespace

extern "C" LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr)
    setenv("GOMP_SPINCOUNT", kBoundedSpinCount, 0);
  return loom::plugin_loader::forward(args, "cpu_onednn", kImplementation);
}
