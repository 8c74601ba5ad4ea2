/* Loom plugin ABI: the plugin entry point, version negotiation and the
 * plugin table.
 *
 * A plugin exports one C symbol, LOOM_PLUGIN_ENTRY_SYMBOL, of type
 * LOOM_PluginEntryFn. The host calls it once after loading; the plugin fills
 * args->plugin with a table that lives until the library is unloaded.
 */
#ifndef LOOM_ABI_PLUGIN_H
#define LOOM_ABI_PLUGIN_H

#include "loom/abi/ep.h"

#define LOOM_PLUGIN_ENTRY_SYMBOL "loom_plugin_entry"

/* --- custom-op domains --- */

/* Schema of one custom op (arity and type parameters). */
typedef struct LOOM_CustomOpSchema {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView op_type;
  int32_t since_version;
  int32_t min_inputs;
  int32_t max_inputs;  /* -1 for variadic */
  int32_t min_outputs;
  int32_t max_outputs; /* -1 for variadic */
} LOOM_CustomOpSchema;
#define LOOM_CustomOpSchema_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_CustomOpSchema, max_outputs)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CustomOpSchema, max_outputs);

typedef struct LOOM_CustomOpDomain {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView domain;
  const LOOM_CustomOpSchema* const* ops; /* array of pointers; lives as long as the plugin state */
  uint64_t op_count;
} LOOM_CustomOpDomain;
#define LOOM_CustomOpDomain_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_CustomOpDomain, op_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CustomOpDomain, op_count);

/* --- plugin table --- */

typedef struct LOOM_Plugin_Init_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  uint32_t agreed_minor; /* in: min(host minor, plugin minor) */
  void* plugin_state;    /* out: passed to every other plugin slot */
} LOOM_Plugin_Init_Args;
#define LOOM_Plugin_Init_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Plugin_Init_Args, plugin_state)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Plugin_Init_Args, plugin_state);

typedef struct LOOM_Plugin_GetEpFactories_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_EpFactory* const* factories; /* out: lives as long as the plugin state */
  uint64_t factory_count;                 /* out */
} LOOM_Plugin_GetEpFactories_Args;
#define LOOM_Plugin_GetEpFactories_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_Plugin_GetEpFactories_Args, factory_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Plugin_GetEpFactories_Args, factory_count);

typedef struct LOOM_Plugin_GetCustomOpDomains_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_CustomOpDomain* const* domains; /* out: lives as long as the plugin state */
  uint64_t domain_count;                     /* out */
} LOOM_Plugin_GetCustomOpDomains_Args;
#define LOOM_Plugin_GetCustomOpDomains_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_Plugin_GetCustomOpDomains_Args, domain_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Plugin_GetCustomOpDomains_Args, domain_count);

/* The plugin's table. Required slots: init, release, get_ep_factories. */
typedef struct LOOM_PluginApi {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  uint32_t abi_major; /* headers the plugin was built with */
  uint32_t abi_minor;
  LOOM_StringView name;    /* lives as long as the library is loaded */
  LOOM_StringView version; /* the plugin's own version, free form */
  /* Called once; a failing init refuses the plugin. */
  LOOM_Status* (*init)(LOOM_Plugin_Init_Args* args);
  /* Called once, last; after it returns no object of the plugin is used. */
  void (*release)(void* plugin_state);
  LOOM_Status* (*get_ep_factories)(void* plugin_state, LOOM_Plugin_GetEpFactories_Args* args);
  /* Optional. */
  LOOM_Status* (*get_custom_op_domains)(void* plugin_state,
                                        LOOM_Plugin_GetCustomOpDomains_Args* args);
  /* Optional, for variant builds of one plugin (say generic and AVX-512)
   * placed in one directory: how well this build suits this machine, 0 if it
   * cannot run here, larger is better; absent reads as 1. Called before
   * init, from one thread; must only inspect the machine (e.g. CPUID). Of
   * the plugins with the same name in a directory the host initialises only
   * the highest-scoring one (the first in file order on a tie) and reports
   * the others as not chosen. */
  int32_t (*score)(void);
} LOOM_PluginApi;
#define LOOM_PluginApi_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_PluginApi, score)
LOOM_DECLARE_STRUCT_SIZE(LOOM_PluginApi, score);

typedef struct LOOM_PluginEntry_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_HostApi* host;     /* in: lives until the plugin's release returns */
  const LOOM_PluginApi* plugin; /* out: lives until the library is unloaded */
} LOOM_PluginEntry_Args;
#define LOOM_PluginEntry_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_PluginEntry_Args, plugin)
LOOM_DECLARE_STRUCT_SIZE(LOOM_PluginEntry_Args, plugin);

/* The host checks the plugin's abi_major against its own after the call and
 * refuses a mismatch; the plugin may also return an error status itself. */
typedef LOOM_Status* (*LOOM_PluginEntryFn)(LOOM_PluginEntry_Args* args);

#endif /* LOOM_ABI_PLUGIN_H */
