/* A good plugin that needs libloom_test_missing_dep.so, which the build puts
 * in a folder that is not on the loader path (and this plugin carries no
 * rpath to it). dlopen fails, and the core must refuse the plugin naming the
 * missing library, like a CUDA EP on a machine without libcudnn.so.9. */
#include "test_plugin_common.h"

#include "missing_dep.h"

static LOOM_PluginApi g_api;

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api, (uint32_t)loom_test_missing_dep_minor());
  args->plugin = &g_api;
  return NULL;
}
