/* A plugin whose init fails with a status created through the host table.
 * The core must refuse it and pass the plugin's message on. */
#include "test_plugin_common.h"

static LOOM_PluginApi g_api;

static LOOM_Status* failing_init(LOOM_Plugin_Init_Args* args) {
  (void)args;
  return test_plugin_error("init failed on purpose");
}

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  g_api.init = failing_init;
  args->plugin = &g_api;
  return NULL;
}
