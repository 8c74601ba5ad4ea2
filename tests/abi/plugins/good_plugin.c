/* A correct ABI test plugin built with the current headers: provider
 * "abi_test_ep" serving test.abi.Negate on float. */
#include "test_plugin_common.h"

static LOOM_PluginApi g_api;

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  args->plugin = &g_api;
  return NULL;
}
