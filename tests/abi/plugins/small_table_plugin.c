/* A plugin table whose struct_size ends before the required get_ep_factories
 * slot (the slot itself is filled, but the size says it is absent). The core
 * must refuse the table as too small, and must not read past struct_size. */
#include "test_plugin_common.h"

static LOOM_PluginApi g_api;

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  g_api.struct_size = LOOM_STRUCT_SIZE(LOOM_PluginApi, release);
  args->plugin = &g_api;
  return NULL;
}
