// Preflight of the cuda plugin's entry library: before loading the
// implementation (which links the CUDA runtime, cuBLAS and cuDNN), load
// each library it needs, from the system loader's search or from one of
// the folders library_search.h names. A library found in such a folder is
// kept loaded, so the implementation's dependencies resolve to it by its
// soname; a missing one is refused with its name and the version needed
// instead of a bare loader error. Header-only, libc only (the entry library
// links nothing else).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace loom::cuda_loader {

struct RequiredLibrary {
  std::string soname;  // e.g. "libcudnn.so.9"
  std::string what;    // e.g. "cuDNN 9"
  // Loaded first from the folder where `soname` was found, when there
  // (cuDNN's sub-libraries, which it opens by name later).
  std::vector<std::string> companions = {};
};

// The libraries the implementation links, as built, in dependency order.
inline std::vector<RequiredLibrary> required_libraries() {
  return {{"libcudart.so.13", "the CUDA 13 runtime"},
          {"libcublasLt.so.13", "cuBLASLt for CUDA 13"},
          {"libcublas.so.13", "cuBLAS for CUDA 13"},
          {"libcudnn.so.9",
           "cuDNN 9",
           {"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
            "libcudnn_heuristic.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9"}}};
}

// Empty when every library loads (from the default search path or one of
// `dirs`, tried in order), else one message naming each missing library
// and what it is. Libraries loaded from `dirs` stay loaded (the process
// needs them next).
inline std::string preflight(const std::vector<RequiredLibrary>& libraries, const std::vector<std::string>& dirs) {
  std::string missing;
  for (const RequiredLibrary& lib : libraries) {
    void* h = dlopen(lib.soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (h != nullptr) {
      dlclose(h);
      continue;
    }
    for (size_t i = 0; h == nullptr && i < dirs.size(); ++i) {
      const std::string path = dirs[i] + "/" + lib.soname;
      if (access(path.c_str(), R_OK) != 0) continue;
      for (const std::string& c : lib.companions) {
        const std::string companion = dirs[i] + "/" + c;
        if (access(companion.c_str(), R_OK) == 0) dlopen(companion.c_str(), RTLD_NOW | RTLD_GLOBAL);
      }
      h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    }
    if (h != nullptr) continue;  // kept loaded
    missing += (missing.empty() ? "" : ", ") + lib.soname + " (" + lib.what + ")";
  }
  if (missing.empty()) return missing;
  std::string where = "the default library path";
  for (const std::string& d : dirs) where += ", " + d;
  return "missing " + missing + "; looked in " + where +
         " (install the CUDA 13 toolkit with cuBLAS and cuDNN 9, or NVIDIA's Python wheels, or add their folder to "
         "LD_LIBRARY_PATH or LOOM_CUDA_LIBRARY_PATH)";
}

}  // namespace loom::cuda_loader
