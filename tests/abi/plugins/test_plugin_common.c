#include "test_plugin_common.h"

#include <string.h>

static const LOOM_HostApi* g_host = NULL;
static uint32_t g_agreed_minor = 0;
static LOOM_Ep g_default_ep;
static LOOM_Ep* g_ep = NULL;

static LOOM_StringView view(const char* s) {
  LOOM_StringView v;
  v.data = s;
  v.size = strlen(s);
  return v;
}

void test_plugin_begin(const LOOM_HostApi* host) { g_host = host; }
const LOOM_HostApi* test_plugin_host(void) { return g_host; }
uint32_t test_plugin_agreed_minor(void) { return g_agreed_minor; }

LOOM_Status* test_plugin_error(const char* message) {
  return g_host->status_create(LOOM_STATUS_FAIL, view(message));
}

/* --- the Negate kernel --- */

static const int32_t kFloatOnly[] = {LOOM_DTYPE_FLOAT};
static LOOM_TypeConstraint g_negate_constraint;
static const LOOM_TypeConstraint* g_negate_constraint_ptrs[1];
static LOOM_KernelDef g_negate_def;
static const LOOM_KernelDef* g_kernel_table[1];
static int g_negate_kernel_object = 0; /* stateless; any non-NULL handle */

static LOOM_Status* negate_create(LOOM_Kernel_Create_Args* args) {
  args->kernel = (void*)&g_negate_kernel_object;
  return NULL;
}

static LOOM_Status* negate_compute(const void* kernel, LOOM_KernelContext* ctx) {
  const LOOM_HostApi* h = g_host;
  const LOOM_Tensor* x;
  LOOM_Tensor* y;
  const float* in;
  float* out;
  uint64_t i, n;
  (void)kernel;
  if (h->kernel_input_count(ctx) != 1 || h->kernel_output_count(ctx) != 1)
    return test_plugin_error("Negate takes one input and one output");
  x = h->kernel_input(ctx, 0);
  if (x == NULL || h->tensor_dtype(x) != LOOM_DTYPE_FLOAT) return test_plugin_error("Negate needs a float input");
  y = h->kernel_output(ctx, 0, LOOM_DTYPE_FLOAT, h->tensor_dims(x), h->tensor_rank(x));
  if (y == NULL) return test_plugin_error("Negate could not allocate its output");
  n = h->tensor_element_count(x);
  in = (const float*)h->tensor_data(x);
  out = (float*)h->tensor_data(y);
  for (i = 0; i < n; ++i) out[i] = -in[i];
  return NULL;
}

static void negate_release(void* kernel) { (void)kernel; }

static void fill_kernel_table(void) {
  memset(&g_negate_constraint, 0, sizeof g_negate_constraint);
  g_negate_constraint.struct_size = LOOM_TypeConstraint_STRUCT_SIZE;
  g_negate_constraint.param = view("T"); /* ignored by the core: test.abi has no ONNX schema */
  g_negate_constraint.dtypes = kFloatOnly;
  g_negate_constraint.dtype_count = 1;

  memset(&g_negate_def, 0, sizeof g_negate_def);
  g_negate_def.struct_size = LOOM_KernelDef_STRUCT_SIZE;
  g_negate_def.domain = view(TEST_PLUGIN_DOMAIN);
  g_negate_def.op_type = view("Negate");
  g_negate_def.since_version = 1;
  g_negate_def.end_version = LOOM_OPSET_OPEN_END;
  g_negate_constraint_ptrs[0] = &g_negate_constraint;
  g_negate_def.constraints = g_negate_constraint_ptrs;
  g_negate_def.constraint_count = 1;
  g_negate_def.create = negate_create;
  g_negate_def.compute = negate_compute;
  g_negate_def.release = negate_release;
  g_kernel_table[0] = &g_negate_def;
}

/* --- the EP --- */

static LOOM_Status* ep_get_kernel_table(void* state, LOOM_Ep_GetKernelTable_Args* args) {
  (void)state;
  args->kernels = g_kernel_table;
  args->kernel_count = 1;
  return NULL;
}

void test_plugin_fill_ep(LOOM_Ep* ep) {
  ep->ext = NULL;
  ep->state = NULL;
  ep->get_kernel_table = ep_get_kernel_table;
  /* Every other 0.1 slot is optional: no capability callback, no compiler,
   * host memory, synchronous execution. */
}

void test_plugin_use_ep_table(LOOM_Ep* ep) { g_ep = ep; }

/* --- the factory and its one CPU device --- */

static LOOM_MemoryInfo g_device_memory;
static LOOM_DeviceInfo g_device;
static const LOOM_DeviceInfo* g_devices[1];
static LOOM_EpFactory g_factory;
static const LOOM_EpFactory* g_factories[1];

static LOOM_Status* factory_get_devices(void* state, LOOM_EpFactory_GetDevices_Args* args) {
  (void)state;
  args->devices = g_devices;
  args->device_count = 1;
  return NULL;
}

static LOOM_Status* factory_create_ep(void* state, LOOM_EpFactory_CreateEp_Args* args) {
  (void)state;
  if (args->device_index != 0) return test_plugin_error("abi_test_ep has one device");
  args->ep = g_ep; /* static and stateless, so one table serves every session */
  return NULL;
}

static void factory_release_ep(void* state, LOOM_Ep* ep) {
  (void)state;
  (void)ep; /* static table: nothing to free */
}

static void fill_factory(void) {
  memset(&g_device, 0, sizeof g_device);
  g_device.struct_size = LOOM_DeviceInfo_STRUCT_SIZE;
  g_device.name = view("cpu");
  memset(&g_device_memory, 0, sizeof g_device_memory);
  g_device_memory.struct_size = LOOM_MemoryInfo_STRUCT_SIZE;
  g_device_memory.name = view("cpu");
  g_device_memory.device_id = 0;
  g_device_memory.host_accessible = 1;
  g_device.memory = &g_device_memory;
  g_devices[0] = &g_device;

  memset(&g_factory, 0, sizeof g_factory);
  g_factory.struct_size = LOOM_EpFactory_STRUCT_SIZE;
  g_factory.name = view(TEST_PLUGIN_PROVIDER_NAME);
  g_factory.get_devices = factory_get_devices;
  g_factory.create_ep = factory_create_ep;
  g_factory.release_ep = factory_release_ep;
  g_factories[0] = &g_factory;
}

/* --- the plugin table --- */

static int g_plugin_state = 0; /* non-NULL token so the core's state handling is exercised */

static LOOM_Status* plugin_init(LOOM_Plugin_Init_Args* args) {
  g_agreed_minor = args->agreed_minor;
  args->plugin_state = &g_plugin_state;
  return NULL;
}

static void plugin_release(void* plugin_state) { (void)plugin_state; }

static LOOM_Status* plugin_get_ep_factories(void* plugin_state, LOOM_Plugin_GetEpFactories_Args* args) {
  if (plugin_state != &g_plugin_state) return test_plugin_error("plugin state was not passed back");
  args->factories = g_factories;
  args->factory_count = 1;
  return NULL;
}

void test_plugin_fill_api(LOOM_PluginApi* api, uint32_t abi_minor) {
  fill_kernel_table();
  fill_factory();
  memset(&g_default_ep, 0, sizeof g_default_ep);
  g_default_ep.struct_size = LOOM_Ep_STRUCT_SIZE;
  test_plugin_fill_ep(&g_default_ep);
  if (g_ep == NULL) g_ep = &g_default_ep;

  memset(api, 0, sizeof *api);
  api->struct_size = LOOM_PluginApi_STRUCT_SIZE;
  api->abi_major = LOOM_ABI_VERSION_MAJOR;
  api->abi_minor = abi_minor;
  api->name = view("abi_test");
  api->version = view("1.0");
  api->init = plugin_init;
  api->release = plugin_release;
  api->get_ep_factories = plugin_get_ep_factories;
  api->get_custom_op_domains = NULL; /* optional */
}
