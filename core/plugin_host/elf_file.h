// A shared library checked as a file before the dynamic loader maps it: a
// regular file (a FIFO would block the loader) holding a 64-bit ELF object
// whose program and section header tables, and every loadable segment's
// bytes, lie inside the file. A truncated library would otherwise be mapped
// and then fault (SIGBUS) when the loader touches a page past its end,
// killing every process that scans its folder.
#pragma once

#include <string>

#include "loom/status.h"

namespace loom::plugin_host {

// Ok, or why `path` cannot be a loadable library (naming the problem).
Status check_elf_file(const std::string& path);

}  // namespace loom::plugin_host
