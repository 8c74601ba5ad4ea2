/* Loom plugin ABI: base types shared by every other ABI header.
 *
 * Compatibility rules (also in plugin_api/CHANGELOG.md):
 *  - C11 and C++; no C++ types, no exceptions, no `long`, no enum-typed
 *    fields: enumerations travel as int32_t with the explicit values below.
 *  - Strings are LOOM_StringView (pointer + length, UTF-8, not necessarily
 *    NUL-terminated).
 *  - Every struct and function table starts with `struct_size` and `ext`.
 *    A reader touches a field only if the writer's struct_size covers it
 *    (LOOM_HAS_FIELD); a missing field reads as zero, the documented default.
 *  - Versions are MAJOR.MINOR. Appending a field, slot, enum value or
 *    extension is a minor bump; anything else is a major bump. Majors must
 *    match; the agreed minor is the smaller of host's and plugin's.
 *  - Calls off the hot path take one *_Args struct and return a status
 *    (NULL = OK). Only the host creates statuses. Accessors (getters that
 *    cannot fail) and hot-path kernel-context calls are positional and are
 *    frozen once released.
 *  - Whoever creates an object releases it through its own release slot.
 *  - Structs that may grow are never embedded by value in another struct nor
 *    passed as arrays of values: always by pointer (or array of pointers),
 *    so a newer, larger struct is read correctly by an older reader.
 *    LOOM_StringView, LOOM_KeyValue and LOOM_Extension are frozen forever
 *    and may be embedded.
 */
#ifndef LOOM_ABI_BASE_H
#define LOOM_ABI_BASE_H

#include <stddef.h>
#include <stdint.h>

#define LOOM_ABI_VERSION_MAJOR 0
#define LOOM_ABI_VERSION_MINOR 2

#ifdef __cplusplus
#define LOOM_EXTERN_C extern "C"
#define LOOM_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define LOOM_EXTERN_C
#define LOOM_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#if defined(_WIN32)
#define LOOM_EXPORT LOOM_EXTERN_C __declspec(dllexport)
#else
#define LOOM_EXPORT LOOM_EXTERN_C __attribute__((visibility("default")))
#endif

/* Size a writer puts in struct_size: offset of the last field plus its size.
 * Trailing padding is excluded so that appending a field later never changes
 * what older writers report. */
#define LOOM_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* True if the struct behind `ptr` (whose type is `type`) was written by a
 * party whose headers had `field`. */
#define LOOM_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* Declares TYPE_STRUCT_SIZE and checks it against sizeof(TYPE). */
#define LOOM_DECLARE_STRUCT_SIZE(type, last_field)                      \
  LOOM_STATIC_ASSERT(LOOM_STRUCT_SIZE(type, last_field) <= sizeof(type), \
                     #type " size macro exceeds sizeof")

/* Extension chain element. Every struct's `ext` points to NULL or to a chain
 * of structs that start with this header. Lives as long as the struct that
 * points to it. */
typedef struct LOOM_Extension {
  uint64_t struct_size;
  const struct LOOM_Extension* next;
  int32_t type; /* identifies the extension; values listed in CHANGELOG */
} LOOM_Extension;

/* UTF-8 string slice; `data` may be NULL when size is 0. Lifetime is stated
 * wherever one is returned. */
typedef struct LOOM_StringView {
  const char* data;
  uint64_t size;
} LOOM_StringView;

/* Opaque status object. NULL means OK. Created only by the host
 * (LOOM_HostApi.status_create) and released by whoever receives it. */
typedef struct LOOM_Status LOOM_Status;

/* Status codes (int32_t). */
#define LOOM_STATUS_OK 0
#define LOOM_STATUS_FAIL 1
#define LOOM_STATUS_INVALID_ARGUMENT 2
#define LOOM_STATUS_NOT_FOUND 3
#define LOOM_STATUS_NOT_IMPLEMENTED 4
#define LOOM_STATUS_INVALID_GRAPH 5
#define LOOM_STATUS_OUT_OF_MEMORY 6

/* Element types (int32_t); the values are ONNX TensorProto.DataType's. */
#define LOOM_DTYPE_UNDEFINED 0
#define LOOM_DTYPE_FLOAT 1
#define LOOM_DTYPE_UINT8 2
#define LOOM_DTYPE_INT8 3
#define LOOM_DTYPE_UINT16 4
#define LOOM_DTYPE_INT16 5
#define LOOM_DTYPE_INT32 6
#define LOOM_DTYPE_INT64 7
#define LOOM_DTYPE_STRING 8
#define LOOM_DTYPE_BOOL 9
#define LOOM_DTYPE_FLOAT16 10
#define LOOM_DTYPE_DOUBLE 11
#define LOOM_DTYPE_UINT32 12
#define LOOM_DTYPE_UINT64 13
#define LOOM_DTYPE_COMPLEX64 14
#define LOOM_DTYPE_COMPLEX128 15
#define LOOM_DTYPE_BFLOAT16 16
/* ABI 0.2: ONNX's newer types, one element per byte in memory (float8 and
 * float8e8m0 codes; float4e2m1's code in the low nibble; int4 / int2 as
 * int8_t, uint4 / uint2 as uint8_t). */
#define LOOM_DTYPE_FLOAT8E4M3FN 17
#define LOOM_DTYPE_FLOAT8E4M3FNUZ 18
#define LOOM_DTYPE_FLOAT8E5M2 19
#define LOOM_DTYPE_FLOAT8E5M2FNUZ 20
#define LOOM_DTYPE_UINT4 21
#define LOOM_DTYPE_INT4 22
#define LOOM_DTYPE_FLOAT4E2M1 23
#define LOOM_DTYPE_FLOAT8E8M0 24
#define LOOM_DTYPE_UINT2 25
#define LOOM_DTYPE_INT2 26

/* Log levels (int32_t). */
#define LOOM_LOG_TRACE 0
#define LOOM_LOG_DEBUG 1
#define LOOM_LOG_INFO 2
#define LOOM_LOG_WARN 3
#define LOOM_LOG_ERROR 4

/* Describes one kind of memory. Memory with the same `name` and `device_id`
 * is the same memory; "cpu" is the host's pageable memory, which every party
 * can read. */
typedef struct LOOM_MemoryInfo {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView name;      /* e.g. "cpu", "cuda"; lives as long as its owner */
  int32_t device_id;         /* 0 for single-device kinds */
  int32_t host_accessible;   /* 1 if host code may dereference pointers into it */
} LOOM_MemoryInfo;
#define LOOM_MemoryInfo_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_MemoryInfo, host_accessible)
LOOM_DECLARE_STRUCT_SIZE(LOOM_MemoryInfo, host_accessible);

/* Key/value option (per-EP options from the config). */
typedef struct LOOM_KeyValue {
  LOOM_StringView key;
  LOOM_StringView value;
} LOOM_KeyValue;

#endif /* LOOM_ABI_BASE_H */
