/* An EP with neither get_capability nor a kernel table: the host creates it,
 * but it can never claim a node (`loom plugins --check` warns). */
#include <string.h>

#include "test_plugin_common.h"

static LOOM_PluginApi g_api;
static LOOM_Ep g_ep;

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  memset(&g_ep, 0, sizeof g_ep);
  g_ep.struct_size = LOOM_Ep_STRUCT_SIZE;
  test_plugin_fill_ep(&g_ep);
  g_ep.get_kernel_table = NULL;
  test_plugin_use_ep_table(&g_ep);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  args->plugin = &g_api;
  return NULL;
}
