/* An otherwise good plugin built for the next ABI major. Majors must match,
 * so the core must refuse it and name both versions. */
#include "test_plugin_common.h"

static LOOM_PluginApi g_api;

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  g_api.abi_major = LOOM_ABI_VERSION_MAJOR + 1;
  args->plugin = &g_api;
  return NULL;
}
