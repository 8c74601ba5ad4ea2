/* A shared library in the plugin folder that is not a Loom plugin: it exports
 * a function, but not loom_plugin_entry. The core must refuse it by name. */
#include "loom/abi/base.h"

LOOM_EXPORT int loom_abi_test_not_a_plugin(void) { return 42; }
