/* The ABI headers as a C11 compiler sees them. This file is built with
 * -std=c11 -Wall -Wextra -pedantic -Werror, so it also proves that the
 * headers are clean, pedantic C11. */
#include "loom/plugin_api.h"

#include "abi_layout_rows.h"

static const LoomAbiLayoutRow kRows[] = {
#include "frozen_abi_layout.def"
};

const LoomAbiLayoutRow* loom_abi_layout_rows_c11(size_t* count) {
  *count = sizeof(kRows) / sizeof(kRows[0]);
  return kRows;
}
