/* The helper library missing_dependency_plugin.c links against. */
#ifndef LOOM_TESTS_ABI_MISSING_DEP_H
#define LOOM_TESTS_ABI_MISSING_DEP_H

#include "loom/abi/base.h"

LOOM_EXPORT int loom_test_missing_dep_minor(void);

#endif /* LOOM_TESTS_ABI_MISSING_DEP_H */
