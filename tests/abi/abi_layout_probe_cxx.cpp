// The ABI headers as a C++ compiler sees them. Built twice, as C++17 and as
// C++20 with -Wall -Wextra -pedantic -Werror; LOOM_ABI_PROBE_FN names the
// function each build defines (see abi_layout_rows.h).
#include "loom/plugin_api.h"

#include "abi_layout_rows.h"

#ifndef LOOM_ABI_PROBE_FN
#error "define LOOM_ABI_PROBE_FN to loom_abi_layout_rows_cxx17 or _cxx20"
#endif

namespace {
const LoomAbiLayoutRow kRows[] = {
#include "frozen_abi_layout.def"
};
}  // namespace

extern "C" const LoomAbiLayoutRow* LOOM_ABI_PROBE_FN(size_t* count) {
  *count = sizeof(kRows) / sizeof(kRows[0]);
  return kRows;
}
