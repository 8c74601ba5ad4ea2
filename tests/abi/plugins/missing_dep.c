/* libloom_test_missing_dep.so: exists only to be absent at load time. */
#include "missing_dep.h"

int loom_test_missing_dep_minor(void) { return LOOM_ABI_VERSION_MINOR; }
