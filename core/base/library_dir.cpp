#include "base/library_dir.h"

#include <dlfcn.h>

namespace loom {

std::filesystem::path core_private_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&core_private_dir), &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::absolute(info.dli_fname).parent_path() / "loom";
}

}  // namespace loom
