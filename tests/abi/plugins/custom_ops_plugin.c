/* The good test plugin plus custom-op domains. Built twice: as custom_ops
 * (valid schemas) and, with TEST_BAD_SCHEMAS, as bad_custom_ops, whose
 * schemas break every rule `loom plugins --check` checks: an empty domain
 * name, an empty op_type, since_version 0, min > max arity, and one op
 * defined twice in a domain. */
#include <string.h>

#include "test_plugin_common.h"

static LOOM_PluginApi g_api;

static LOOM_StringView view(const char* s) {
  LOOM_StringView v;
  v.data = s;
  v.size = strlen(s);
  return v;
}

static void schema(LOOM_CustomOpSchema* s, const char* op, int32_t since, int32_t min_in, int32_t max_in,
                   int32_t min_out, int32_t max_out) {
  memset(s, 0, sizeof *s);
  s->struct_size = LOOM_CustomOpSchema_STRUCT_SIZE;
  s->op_type = view(op);
  s->since_version = since;
  s->min_inputs = min_in;
  s->max_inputs = max_in;
  s->min_outputs = min_out;
  s->max_outputs = max_out;
}

static void domain(LOOM_CustomOpDomain* d, const char* name, const LOOM_CustomOpSchema* const* ops, uint64_t count) {
  memset(d, 0, sizeof *d);
  d->struct_size = LOOM_CustomOpDomain_STRUCT_SIZE;
  d->domain = view(name);
  d->ops = ops;
  d->op_count = count;
}

static LOOM_CustomOpSchema g_schemas[6];
static const LOOM_CustomOpSchema* g_good_ops[2];
static const LOOM_CustomOpSchema* g_bad_ops[4];
static LOOM_CustomOpDomain g_domains[2];
static const LOOM_CustomOpDomain* g_domain_ptrs[2];

static LOOM_Status* get_custom_op_domains(void* plugin_state, LOOM_Plugin_GetCustomOpDomains_Args* args) {
  (void)plugin_state;
  args->domains = g_domain_ptrs;
#ifdef TEST_BAD_SCHEMAS
  args->domain_count = 2;
#else
  args->domain_count = 1;
#endif
  return NULL;
}

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  schema(&g_schemas[0], "Scale", 1, 1, 1, 1, 1);
  schema(&g_schemas[1], "Concat", 1, 1, -1, 1, 1); /* variadic inputs */
  g_good_ops[0] = &g_schemas[0];
  g_good_ops[1] = &g_schemas[1];
  domain(&g_domains[0], "test.custom", g_good_ops, 2);
  g_domain_ptrs[0] = &g_domains[0];

  schema(&g_schemas[2], "", 1, 1, 1, 1, 1);          /* empty op_type */
  schema(&g_schemas[3], "Ancient", 0, 1, 1, 1, 1);   /* since_version 0 */
  schema(&g_schemas[4], "Backwards", 1, 3, 2, 1, 1); /* min_inputs > max_inputs */
  schema(&g_schemas[5], "Scale", 1, 1, 1, 1, 1);
  g_bad_ops[0] = &g_schemas[2];
  g_bad_ops[1] = &g_schemas[3];
  g_bad_ops[2] = &g_schemas[4];
  g_bad_ops[3] = &g_schemas[5];
#ifdef TEST_BAD_SCHEMAS
  /* "Scale" again in test.custom, and a domain with no name. */
  g_good_ops[1] = &g_schemas[5];
#endif
  domain(&g_domains[1], "", g_bad_ops, 4);
  g_domain_ptrs[1] = &g_domains[1];

  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  g_api.get_custom_op_domains = get_custom_op_domains;
  args->plugin = &g_api;
  return NULL;
}
