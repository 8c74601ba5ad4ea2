// Preflight of the cuda plugin's entry library: before loading the
// implementation (which links the CUDA runtime, cuBLAS and cuDNN), check
// that each library it needs can be loaded, so a missing one is refused
// with its name and the version needed instead of a bare loader error.
// Header-only, libc only (the entry library links nothing else).
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace loom::cuda_loader {

struct RequiredLibrary {
  std::string soname;  // e.g. "libcudnn.so.9"
  std::string what;    // e.g. "cuDNN 9"
};

// The libraries the implementation links, as built.
inline std::vector<RequiredLibrary> required_libraries() {
  return {{"libcudart.so.13", "the CUDA 13 runtime"},
          {"libcublas.so.13", "cuBLAS for CUDA 13"},
          {"libcublasLt.so.13", "cuBLASLt for CUDA 13"},
          {"libcudnn.so.9", "cuDNN 9"}};
}

// Empty when every library loads (from the default search path or one of
// `dirs`), else one message naming each missing library and what it is.
inline std::string preflight(const std::vector<RequiredLibrary>& libraries, const std::vector<std::string>& dirs) {
  std::string missing;
  for (const RequiredLibrary& lib : libraries) {
    void* h = dlopen(lib.soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
    for (size_t i = 0; h == nullptr && i < dirs.size(); ++i)
      h = dlopen((dirs[i] + "/" + lib.soname).c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (h != nullptr) {
      dlclose(h);
      continue;
    }
    missing += (missing.empty() ? "" : ", ") + lib.soname + " (" + lib.what + ")";
  }
  if (missing.empty()) return missing;
  std::string where = "the default library path";
  for (const std::string& d : dirs) where += ", " + d;
  return "missing " + missing + "; looked in " + where +
         " (install the CUDA 13 toolkit with cuBLAS and cuDNN 9, or add their folder to LD_LIBRARY_PATH)";
}

}  // namespace loom::cuda_loader
