// For a plugin's entry library (libc only) that prepares the process and
// then loads the real implementation from a subfolder the plugin scan does
// not enter (cpu_onednn: bounds OpenMP spinning first; cuda: checks the
// driver and the CUDA libraries first), forwarding the entry call to it.
#pragma once

#include <dlfcn.h>

#include <string>

#include "loom/plugin_api.h"

namespace loom::plugin_loader {

// The folder of the library this code is compiled into.
inline std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr) return ".";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

inline LOOM_Status* fail(LOOM_PluginEntry_Args* args, const std::string& message) {
  return args->host->status_create(LOOM_STATUS_FAIL, {message.data(), message.size()});
}

// Loads own_directory()/`implementation` (never unloaded: runtimes such as
// OpenMP and CUDA keep threads and handlers for the process) and calls its
// entry point; failures name `plugin` and the file.
inline LOOM_Status* forward(LOOM_PluginEntry_Args* args, const char* plugin, const char* implementation) {
  const std::string path = own_directory() + "/" + implementation;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(args, std::string(plugin) + ": cannot load " + path + ": " + (why ? why : "unknown error"));
  }
  auto entry = reinterpret_cast<LOOM_PluginEntryFn>(dlsym(handle, LOOM_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) return fail(args, std::string(plugin) + ": " + path + " has no " + LOOM_PLUGIN_ENTRY_SYMBOL);
  return entry(args);
}

}  // namespace loom::plugin_loader
