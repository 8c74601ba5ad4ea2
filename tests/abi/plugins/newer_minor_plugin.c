/* A good plugin built against a newer minor of the ABI than the core's: it
 * reports minor LOOM_ABI_VERSION_MINOR + 1, and its plugin table and EP table
 * carry one extra trailing slot each, as appended by that future minor
 * (struct_size covers them). A newer plugin must degrade gracefully on an
 * older core: it loads and runs, and the core never touches a slot its
 * headers do not have. The extra slots abort() if called. */
#include <stdlib.h>

#include "test_plugin_common.h"

/* The current tables with one slot appended, as a future header would have
 * them. Embedding keeps every known field at its released offset. */
typedef struct NewerPluginApi {
  LOOM_PluginApi current;
  void (*future_plugin_slot)(void* plugin_state);
} NewerPluginApi;

typedef struct NewerEp {
  LOOM_Ep current;
  void (*future_ep_slot)(void* state);
} NewerEp;

static NewerPluginApi g_api;
static NewerEp g_ep;

static void never_called(void* state) {
  (void)state;
  abort(); /* an older core must not know this slot exists */
}

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api.current, LOOM_ABI_VERSION_MINOR + 1);
  g_api.current.struct_size = LOOM_STRUCT_SIZE(NewerPluginApi, future_plugin_slot);
  g_api.future_plugin_slot = never_called;

  test_plugin_fill_ep(&g_ep.current);
  g_ep.current.struct_size = LOOM_STRUCT_SIZE(NewerEp, future_ep_slot);
  g_ep.future_ep_slot = never_called;
  test_plugin_use_ep_table(&g_ep.current);

  args->plugin = &g_api.current;
  return NULL;
}
