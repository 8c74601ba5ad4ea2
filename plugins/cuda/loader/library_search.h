// Where the cuda plugin's entry library looks for the CUDA libraries the
// implementation links, beyond the system loader's own search (ld.so.cache,
// LD_LIBRARY_PATH): LOOM_CUDA_LIBRARY_PATH (a colon list), the toolkit the
// plugin was built against, CUDA_HOME / CUDA_PATH, and the nvidia/*/lib
// folders of Python environments' NVIDIA wheels (nvidia-cublas,
// nvidia-cudnn-cu13, ...): the active virtualenv or conda prefix, each
// PATH entry's prefix (its bin/python3's environment) and ~/.local.
// Header-only, libc only (the entry library links nothing else).
#pragma once

#include <glob.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace loom::cuda_loader {

// Folders named by `list` (separated by ':'), empty entries dropped.
inline std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The nvidia/*/lib folders of the Python environments under `prefix`
// (lib/python3.*/site-packages and dist-packages), sorted.
inline std::vector<std::string> wheel_library_dirs(const std::string& prefix) {
  std::vector<std::string> out;
  for (const char* pattern : {"/lib/python3*/site-packages/nvidia/*/lib", "/lib/python3*/dist-packages/nvidia/*/lib",
                              "/lib64/python3*/site-packages/nvidia/*/lib"}) {
    glob_t g{};
    if (glob((prefix + pattern).c_str(), GLOB_ONLYDIR, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    globfree(&g);
  }
  return out;
}

// Every folder to try, in order, without duplicates. `built_with` is the
// toolkit's library folder at build time. Reads the environment.
inline std::vector<std::string> library_search_dirs(const std::string& built_with) {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (d.empty()) return;
    for (const std::string& seen : dirs)
      if (seen == d) return;
    dirs.push_back(d);
  };
  auto add_all = [&](const std::vector<std::string>& list) {
    for (const std::string& d : list) add(d);
  };
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  };
  add_all(split_path_list(env("LOOM_CUDA_LIBRARY_PATH")));
  add(built_with);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (!env(var).empty()) add(env(var) + "/lib64");
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (!env(var).empty()) add_all(wheel_library_dirs(env(var)));
  for (const std::string& bin : split_path_list(env("PATH"))) {
    const size_t slash = bin.find_last_of('/');
    if (slash == std::string::npos || bin.substr(slash) != "/bin") continue;
    add_all(wheel_library_dirs(bin.substr(0, slash)));
  }
  if (!env("HOME").empty()) add_all(wheel_library_dirs(env("HOME") + "/.local"));
  return dirs;
}

}  // namespace loom::cuda_loader
