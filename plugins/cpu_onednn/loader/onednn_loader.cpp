// The cpu_onednn plugin's entry library. It exists for one reason: OpenMP
// reads its wait policy once, when libgomp loads, and libgomp loads with
// oneDNN. By default idle OpenMP threads spin for a long time (GOMP_SPINCOUNT
// 300000), which burns CPU between runs and, when the machine is busy, makes
// barriers wait on descheduled spinners: on 2 contended cores ResNet-50 at 2
// threads went from 76 ms (passive) to a 394 ms median with spinning. So this
// library bounds the spin before loading the real plugin, unless the user
// chose a policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT set), then forwards the
// entry call. It links nothing but libc.
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "loom/plugin_api.h"

namespace {

// Spin iterations before sleeping: tens of microseconds, enough to bridge the
// gaps between consecutive primitives of one run, not the gaps between runs.
constexpr char kBoundedSpinCount[] = "10000";
constexpr char kImplementation[] = "cpu_onednn/libloom_cpu_onednn_impl.so";

std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr) return ".";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

LOOM_Status* fail(LOOM_PluginEntry_Args* args, const std::string& message) {
  return args->host->status_create(LOOM_STATUS_FAIL, {message.data(), message.size()});
}

}  // namespace

extern "C" LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr)
    setenv("GOMP_SPINCOUNT", kBoundedSpinCount, 0);
  const std::string path = own_directory() + "/" + kImplementation;
  // NODELETE: OpenMP worker threads outlive any call; unloading libgomp under
  // them crashes the process at exit.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(args, "cpu_onednn: cannot load " + path + ": " + (why ? why : "unknown error"));
  }
  auto entry = reinterpret_cast<LOOM_PluginEntryFn>(dlsym(handle, "loom_plugin_entry"));
  if (entry == nullptr) return fail(args, "cpu_onednn: " + path + " has no loom_plugin_entry");
  return entry(args);
}
