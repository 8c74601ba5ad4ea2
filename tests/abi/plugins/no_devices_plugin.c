/* A factory whose hardware is absent: get_devices reports no device and a
 * reason. Not an error (the provider is just unavailable here). */
#include <string.h>

#include "test_plugin_common.h"

#define NO_DEVICES_REASON "no test hardware here (on purpose)"

static LOOM_PluginApi g_api;
static LOOM_EpFactory g_factory;
static const LOOM_EpFactory* g_factories[1];

static LOOM_Status* get_devices(void* state, LOOM_EpFactory_GetDevices_Args* args) {
  (void)state;
  args->devices = NULL;
  args->device_count = 0;
  args->unavailable_reason.data = NO_DEVICES_REASON;
  args->unavailable_reason.size = sizeof(NO_DEVICES_REASON) - 1;
  return NULL;
}
static LOOM_Status* create_ep(void* state, LOOM_EpFactory_CreateEp_Args* args) {
  (void)state;
  (void)args;
  return test_plugin_error("no devices");
}
static void release_ep(void* state, LOOM_Ep* ep) {
  (void)state;
  (void)ep;
}
static LOOM_Status* get_ep_factories(void* plugin_state, LOOM_Plugin_GetEpFactories_Args* args) {
  (void)plugin_state;
  args->factories = g_factories;
  args->factory_count = 1;
  return NULL;
}

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  memset(&g_factory, 0, sizeof g_factory);
  g_factory.struct_size = LOOM_EpFactory_STRUCT_SIZE;
  g_factory.name.data = "absent_ep";
  g_factory.name.size = strlen("absent_ep");
  g_factory.get_devices = get_devices;
  g_factory.create_ep = create_ep;
  g_factory.release_ep = release_ep;
  g_factories[0] = &g_factory;
  g_api.get_ep_factories = get_ep_factories;
  args->plugin = &g_api;
  return NULL;
}
