/* One row per frozen ABI fact (an offset, a struct size or a constant), as
 * seen by one compiler/language mode. The probes compile
 * frozen_abi_layout.def in C11, C++17 and C++20; abi_layout_test.cpp checks
 * that every probe's measured value equals the frozen one. Plain C so that
 * the C11 probe can produce it. */
#ifndef LOOM_TESTS_ABI_LAYOUT_ROWS_H
#define LOOM_TESTS_ABI_LAYOUT_ROWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct LoomAbiLayoutRow {
  const char* what; /* e.g. "offsetof(LOOM_Ep, compile)"; a string literal */
  int64_t measured; /* what this compiler and language mode computes */
  int64_t frozen;   /* the released value from frozen_abi_layout.def */
} LoomAbiLayoutRow;

#ifdef __cplusplus
extern "C" {
#endif

/* Each returns a static array and writes its length to *count. */
const LoomAbiLayoutRow* loom_abi_layout_rows_c11(size_t* count);
const LoomAbiLayoutRow* loom_abi_layout_rows_cxx17(size_t* count);
const LoomAbiLayoutRow* loom_abi_layout_rows_cxx20(size_t* count);

#ifdef __cplusplus
}
#endif

/* Expands frozen_abi_layout.def into LoomAbiLayoutRow initialisers. Valid in
 * C11 and C++ (offsetof and the size macros are constant expressions). */
#define LOOM_FROZEN_OFFSET(type, field, offset) \
  {"offsetof(" #type ", " #field ")", (int64_t)offsetof(type, field), (int64_t)(offset)},
#define LOOM_FROZEN_STRUCT_SIZE(type, size) \
  {#type "_STRUCT_SIZE", (int64_t)(type##_STRUCT_SIZE), (int64_t)(size)},
#define LOOM_FROZEN_SIZEOF(type, size) {"sizeof(" #type ")", (int64_t)sizeof(type), (int64_t)(size)},
#define LOOM_FROZEN_CONSTANT(name, value) {#name, (int64_t)(name), (int64_t)(value)},

#endif /* LOOM_TESTS_ABI_LAYOUT_ROWS_H */
