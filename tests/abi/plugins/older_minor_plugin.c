/* A good plugin built against the previous minor of the ABI: compiled with
 * the frozen 0.1 headers in tests/abi/abi_0_1/include (not the current
 * ones), so every struct_size it writes is the smaller, older one and the
 * core's LOOM_HAS_FIELD checks are exercised for real. It reports minor 1.
 *
 * Besides the standard test EP (test.abi.Negate as a kernel of its own EP,
 * the 0.1 way to run a custom op) it declares the test.abi domain with a
 * 0.1 custom-op schema: arity only (Negate takes 1 input, gives 1 output),
 * which the current core reads and checks nodes against. */
#include <string.h>

#include "test_plugin_common.h"

/* Built against the frozen copy, or this case tests nothing. */
LOOM_STATIC_ASSERT(LOOM_ABI_VERSION_MAJOR == 0 && LOOM_ABI_VERSION_MINOR == 1,
                   "older_minor must be compiled against tests/abi/abi_0_1/include");

static LOOM_PluginApi g_api;
static LOOM_CustomOpSchema g_negate;
static const LOOM_CustomOpSchema* g_ops[1] = {&g_negate};
static LOOM_CustomOpDomain g_domain;
static const LOOM_CustomOpDomain* g_domains[1] = {&g_domain};

static LOOM_Status* get_custom_op_domains(void* plugin_state, LOOM_Plugin_GetCustomOpDomains_Args* args) {
  (void)plugin_state;
  args->domains = g_domains;
  args->domain_count = 1;
  return NULL;
}

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  memset(&g_negate, 0, sizeof g_negate);
  g_negate.struct_size = LOOM_CustomOpSchema_STRUCT_SIZE; /* the 0.1 size */
  g_negate.op_type.data = "Negate";
  g_negate.op_type.size = 6;
  g_negate.since_version = 1;
  g_negate.min_inputs = g_negate.max_inputs = 1;
  g_negate.min_outputs = g_negate.max_outputs = 1;
  memset(&g_domain, 0, sizeof g_domain);
  g_domain.struct_size = LOOM_CustomOpDomain_STRUCT_SIZE; /* the 0.1 size */
  g_domain.domain.data = TEST_PLUGIN_DOMAIN;
  g_domain.domain.size = strlen(TEST_PLUGIN_DOMAIN);
  g_domain.ops = g_ops;
  g_domain.op_count = 1;

  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  g_api.get_custom_op_domains = get_custom_op_domains;
  args->plugin = &g_api;
  return NULL;
}
