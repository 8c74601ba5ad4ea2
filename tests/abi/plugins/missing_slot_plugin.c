/* A plugin table of full size whose required get_ep_factories slot is NULL.
 * The core must refuse it and name the slot. */
#include "test_plugin_common.h"

static LOOM_PluginApi g_api;

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  g_api.get_ep_factories = NULL;
  args->plugin = &g_api;
  return NULL;
}
