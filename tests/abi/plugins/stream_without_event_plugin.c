/* An EP that makes streams (so it runs asynchronously) but no events: the
 * host could not order its work, so it refuses to create the EP. */
#include <string.h>

#include "test_plugin_common.h"

static LOOM_PluginApi g_api;
static LOOM_Ep g_ep;
static LOOM_Stream g_stream;

static LOOM_Status* stream_synchronize(void* state) {
  (void)state;
  return NULL;
}
static void stream_release(LOOM_Stream* stream) { (void)stream; /* static */ }

static LOOM_Stream* create_stream(void* state) {
  (void)state;
  return &g_stream;
}

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  memset(&g_stream, 0, sizeof g_stream);
  g_stream.struct_size = LOOM_Stream_STRUCT_SIZE;
  g_stream.synchronize = stream_synchronize;
  g_stream.release = stream_release;
  memset(&g_ep, 0, sizeof g_ep);
  g_ep.struct_size = LOOM_Ep_STRUCT_SIZE;
  test_plugin_fill_ep(&g_ep);
  g_ep.create_stream = create_stream;
  g_ep.create_event = NULL;
  test_plugin_use_ep_table(&g_ep);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  args->plugin = &g_api;
  return NULL;
}
