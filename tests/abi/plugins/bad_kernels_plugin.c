/* An EP whose kernel table is inconsistent in every way `loom plugins
 * --check` looks for, while each entry still has create/compute/release (so
 * the host creates the EP): an empty op_type, an inverted opset range, an
 * unknown dtype, a constraint with no param name, and two entries serving the
 * same (domain, op, opset) with the same types. */
#include <string.h>

#include "test_plugin_common.h"

static LOOM_PluginApi g_api;
static LOOM_Ep g_ep;

static const int32_t kFloat[] = {LOOM_DTYPE_FLOAT};
static const int32_t kUnknown[] = {LOOM_DTYPE_FLOAT, 99};

static LOOM_TypeConstraint g_float_t, g_unknown_t, g_unnamed_t;
static const LOOM_TypeConstraint* g_float_c[1];
static const LOOM_TypeConstraint* g_unknown_c[1];
static const LOOM_TypeConstraint* g_unnamed_c[1];

#define KERNEL_COUNT 6
static LOOM_KernelDef g_defs[KERNEL_COUNT];
static const LOOM_KernelDef* g_table[KERNEL_COUNT];
static int g_kernel_object = 0;

static LOOM_StringView view(const char* s) {
  LOOM_StringView v;
  v.data = s;
  v.size = strlen(s);
  return v;
}

static LOOM_Status* k_create(LOOM_Kernel_Create_Args* args) {
  args->kernel = &g_kernel_object;
  return NULL;
}
static LOOM_Status* k_compute(const void* kernel, LOOM_KernelContext* ctx) {
  (void)kernel;
  (void)ctx;
  return test_plugin_error("not meant to run");
}
static void k_release(void* kernel) { (void)kernel; }

static void constraint(LOOM_TypeConstraint* c, const char* param, const int32_t* dtypes, uint64_t count) {
  memset(c, 0, sizeof *c);
  c->struct_size = LOOM_TypeConstraint_STRUCT_SIZE;
  c->param = view(param);
  c->dtypes = dtypes;
  c->dtype_count = count;
}

static void def(int i, const char* op, int32_t since, int32_t end, const LOOM_TypeConstraint* const* c) {
  LOOM_KernelDef* d = &g_defs[i];
  memset(d, 0, sizeof *d);
  d->struct_size = LOOM_KernelDef_STRUCT_SIZE;
  d->domain = view(TEST_PLUGIN_DOMAIN);
  d->op_type = view(op);
  d->since_version = since;
  d->end_version = end;
  d->constraints = c;
  d->constraint_count = c ? 1 : 0;
  d->create = k_create;
  d->compute = k_compute;
  d->release = k_release;
  g_table[i] = d;
}

static LOOM_Status* get_kernel_table(void* state, LOOM_Ep_GetKernelTable_Args* args) {
  (void)state;
  args->kernels = g_table;
  args->kernel_count = KERNEL_COUNT;
  return NULL;
}

LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  test_plugin_begin(args->host);
  constraint(&g_float_t, "T", kFloat, 1);
  constraint(&g_unknown_t, "T", kUnknown, 2);
  constraint(&g_unnamed_t, "", kFloat, 1);
  g_float_c[0] = &g_float_t;
  g_unknown_c[0] = &g_unknown_t;
  g_unnamed_c[0] = &g_unnamed_t;
  def(0, "", 1, LOOM_OPSET_OPEN_END, g_float_c);
  def(1, "Inverted", 5, 3, g_float_c);
  def(2, "UnknownType", 1, LOOM_OPSET_OPEN_END, g_unknown_c);
  def(3, "Unnamed", 1, LOOM_OPSET_OPEN_END, g_unnamed_c);
  def(4, "Twice", 1, 10, g_float_c);
  def(5, "Twice", 7, LOOM_OPSET_OPEN_END, g_float_c);

  memset(&g_ep, 0, sizeof g_ep);
  g_ep.struct_size = LOOM_Ep_STRUCT_SIZE;
  test_plugin_fill_ep(&g_ep);
  g_ep.get_kernel_table = get_kernel_table;
  test_plugin_use_ep_table(&g_ep);
  test_plugin_fill_api(&g_api, LOOM_ABI_VERSION_MINOR);
  args->plugin = &g_api;
  return NULL;
}
