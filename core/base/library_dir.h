// Where the core library's private files live: <libdir>/loom/, beside the
// loaded libloom_core (build/lib in the build tree, the install's libdir
// after `cmake --install`). The bundled plugins (plugins/) and the
// shape-inference server program sit there.
#pragma once

#include <filesystem>

namespace loom {

// <directory of the loaded core library>/loom, or an empty path when the
// library's file cannot be found (dladdr fails).
std::filesystem::path core_private_dir();

}  // namespace loom
