/* The good test plugin plus custom-op domains. Built twice: as custom_ops
 * (valid schemas) and, with TEST_BAD_SCHEMAS, as bad_custom_ops, whose
 * schemas break the rules `loom plugins --check` checks: an empty domain
 * name, an empty op_type, since_version 0, min > max arity, and one op
 * defined twice in a domain.
 *
 * test.custom.Scale is declared completely (the 0.2 fields: formals, type
 * constraint, attribute); test.custom.Concat is written with the 0.1 struct
 * size (arity only), as an older plugin would. Scale has a kernel for this
 * plugin's own provider only (abi_test_ep), so the host gives it to that EP
 * and to no other. */
#include <string.h>

#include "test_plugin_common.h"

static LOOM_PluginApi g_api;

static LOOM_StringView view(const char* s) {
  LOOM_StringView v;
  v.data = s;
  v.size = strlen(s);
  return v;
}

/* Arity only: the 0.1 layout. */
static void schema(LOOM_CustomOpSchema* s, const char* op, int32_t since, int32_t min_in, int32_t max_in,
                   int32_t min_out, int32_t max_out) {
  memset(s, 0, sizeof *s);
  s->struct_size = LOOM_STRUCT_SIZE(LOOM_CustomOpSchema, max_outputs);
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

/* Scale(X: T) -> Y: T, T = float, attribute scale (float, required). */
static LOOM_FormalParameter g_x, g_y;
static const LOOM_FormalParameter* g_scale_in[1] = {&g_x};
static const LOOM_FormalParameter* g_scale_out[1] = {&g_y};
static const int32_t g_float[1] = {LOOM_DTYPE_FLOAT};
static LOOM_TypeConstraint g_t;
static const LOOM_TypeConstraint* g_scale_types[1] = {&g_t};
static LOOM_AttributeSchema g_scale_attr;
static const LOOM_AttributeSchema* g_scale_attrs[1] = {&g_scale_attr};

/* Y has X's type and shape; X of rank > 4 is refused (so a test sees the
 * host turn an inference error into a load error naming the node). */
static LOOM_Status* scale_infer_shapes(LOOM_CustomOp_InferShapes_Args* args) {
  const LOOM_HostApi* h = test_plugin_host();
  const int64_t* dims = NULL;
  const int64_t rank = h->node_input_shape(args->node, 0, &dims);
  if (rank > 4) return test_plugin_error("Scale supports inputs of rank <= 4");
  return args->set_output(args->sink, 0, h->node_input_dtype(args->node, 0), dims, rank);
}

static void declare_scale(LOOM_CustomOpSchema* s) {
  g_x.struct_size = g_y.struct_size = LOOM_FormalParameter_STRUCT_SIZE;
  g_x.name = view("X");
  g_y.name = view("Y");
  g_x.type_param = g_y.type_param = view("T");
  g_x.option = g_y.option = LOOM_FORMAL_SINGLE;
  g_t.struct_size = LOOM_TypeConstraint_STRUCT_SIZE;
  g_t.param = view("T");
  g_t.dtypes = g_float;
  g_t.dtype_count = 1;
  g_scale_attr.struct_size = LOOM_AttributeSchema_STRUCT_SIZE;
  g_scale_attr.name = view("scale");
  g_scale_attr.type = LOOM_ATTR_FLOAT;
  g_scale_attr.required = 1;
  s->struct_size = LOOM_CustomOpSchema_STRUCT_SIZE;
  s->inputs = g_scale_in;
  s->input_count = 1;
  s->outputs = g_scale_out;
  s->output_count = 1;
  s->type_constraints = g_scale_types;
  s->type_constraint_count = 1;
  s->attributes = g_scale_attrs;
  s->attribute_count = 1;
  s->infer_shapes = scale_infer_shapes;
}

/* y = scale * x, float. */
static int g_scale_kernel_object = 0;
static LOOM_Status* scale_create(LOOM_Kernel_Create_Args* args) {
  args->kernel = (void*)&g_scale_kernel_object;
  return NULL;
}
static LOOM_Status* scale_compute(const void* kernel, LOOM_KernelContext* ctx) {
  const LOOM_HostApi* h = test_plugin_host();
  const LOOM_Tensor* x = h->kernel_input(ctx, 0);
  LOOM_Tensor* y;
  float scale = 1.0f;
  const float* in;
  float* out;
  uint64_t i, n;
  (void)kernel;
  if (!h->node_attr_float(h->kernel_node(ctx), view("scale"), &scale)) return test_plugin_error("Scale: no scale");
  y = h->kernel_output(ctx, 0, LOOM_DTYPE_FLOAT, h->tensor_dims(x), h->tensor_rank(x));
  if (y == NULL) return test_plugin_error("Scale could not allocate its output");
  n = h->tensor_element_count(x);
  in = (const float*)h->tensor_data(x);
  out = (float*)h->tensor_data(y);
  for (i = 0; i < n; ++i) out[i] = scale * in[i];
  return NULL;
}
static void scale_release(void* kernel) { (void)kernel; }

static const LOOM_TypeConstraint* g_scale_kernel_types[1] = {&g_t};
static LOOM_KernelDef g_scale_def;
static LOOM_CustomOpKernel g_scale_kernel;
static const LOOM_CustomOpKernel* g_kernels[1] = {&g_scale_kernel};

static void scale_kernel(LOOM_CustomOpDomain* d) {
  g_scale_def.struct_size = LOOM_KernelDef_STRUCT_SIZE;
  g_scale_def.domain = view("test.custom");
  g_scale_def.op_type = view("Scale");
  g_scale_def.since_version = 1;
  g_scale_def.end_version = LOOM_OPSET_OPEN_END;
  g_scale_def.constraints = g_scale_kernel_types;
  g_scale_def.constraint_count = 1;
  g_scale_def.create = scale_create;
  g_scale_def.compute = scale_compute;
  g_scale_def.release = scale_release;
  g_scale_kernel.struct_size = LOOM_CustomOpKernel_STRUCT_SIZE;
  g_scale_kernel.provider = view(TEST_PLUGIN_PROVIDER_NAME);
  g_scale_kernel.kernel = &g_scale_def;
  d->kernels = g_kernels;
  d->kernel_count = 1;
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
  declare_scale(&g_schemas[0]);
  schema(&g_schemas[1], "Concat", 1, 1, -1, 1, 1); /* variadic inputs */
  g_good_ops[0] = &g_schemas[0];
  g_good_ops[1] = &g_schemas[1];
  domain(&g_domains[0], "test.custom", g_good_ops, 2);
  scale_kernel(&g_domains[0]);
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
