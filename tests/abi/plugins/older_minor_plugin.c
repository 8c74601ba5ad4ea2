/* A good plugin built against an older minor of the ABI: it reports minor 0.
 * An older plugin must load and run on a newer core.
 *
 * Under ABI 0.1 there is no released 0.0 header to build against, so this
 * case reports minor 0 with the current struct sizes. Once 0.2 exists, a
 * frozen copy of the 0.1 headers will live in tests/abi/ (e.g.
 * tests/abi/abi_0_1/loom/...) and this plugin will be built against it, so
 * that every struct_size it writes is the smaller, older one and the core's
 * LOOM_HAS_FIELD checks are exercised for real. */
#include "test_plugin_common.h"

static LOOM_PluginApi g_api;

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api, 0);
  args->plugin = &g_api;
  return NULL;
}
