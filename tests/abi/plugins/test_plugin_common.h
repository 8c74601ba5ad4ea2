/* The well-behaved parts shared by the ABI test plugins, written against the
 * raw C ABI (not the SDK) so that each case can misbehave in exactly one way.
 *
 * A good test plugin offers one EP factory, provider "abi_test_ep", with one
 * CPU device and one kernel: test.abi.Negate on float (y = -x), opset 1+.
 * Everything is static: the plugin state, the factory and the EP table are
 * immutable after the entry call, so sharing them between sessions is safe. */
#ifndef LOOM_TESTS_ABI_TEST_PLUGIN_COMMON_H
#define LOOM_TESTS_ABI_TEST_PLUGIN_COMMON_H

#include "loom/plugin_api.h"

#define TEST_PLUGIN_PROVIDER_NAME "abi_test_ep"
#define TEST_PLUGIN_DOMAIN "test.abi"

/* Remembers the host table; call first in every entry point. */
void test_plugin_begin(const LOOM_HostApi* host);
const LOOM_HostApi* test_plugin_host(void);

/* An error status made by the host (only the host creates statuses). */
LOOM_Status* test_plugin_error(const char* message);

/* Fills a complete, correct plugin table that reports ABI
 * LOOM_ABI_VERSION_MAJOR.abi_minor. Cases then break one thing. */
void test_plugin_fill_api(LOOM_PluginApi* api, uint32_t abi_minor);

/* The EP table handed out by create_ep. Defaults to a table of exactly
 * LOOM_Ep_STRUCT_SIZE; a case may substitute a larger table (one with extra
 * trailing slots) before returning from its entry point. The table must live
 * until the library is unloaded. */
void test_plugin_use_ep_table(LOOM_Ep* ep);
/* Fills the standard kernel-EP slots of `ep` (struct_size is left alone). */
void test_plugin_fill_ep(LOOM_Ep* ep);

/* The minor the host agreed on in init (min of host's and plugin's). */
uint32_t test_plugin_agreed_minor(void);

#endif /* LOOM_TESTS_ABI_TEST_PLUGIN_COMMON_H */
