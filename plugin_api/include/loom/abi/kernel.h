/* Loom plugin ABI: kernel tables (kernel-style EPs).
 *
 * A kernel EP publishes a static table of LOOM_KernelDef. The core matches a
 * node against (domain, op_type, opset range, type constraints) and, on a
 * match, the node may be placed on the EP without calling get_capability.
 */
#ifndef LOOM_ABI_KERNEL_H
#define LOOM_ABI_KERNEL_H

#include "loom/abi/host.h"

/* Allowed element types for one type parameter of the op's schema (e.g. "T").
 * The core binds the parameter to inputs/outputs through the ONNX schema;
 * a constraint on a parameter the schema lacks is ignored. */
typedef struct LOOM_TypeConstraint {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView param;   /* e.g. "T" */
  const int32_t* dtypes;   /* LOOM_DTYPE_* values; lives as long as the table */
  uint64_t dtype_count;
} LOOM_TypeConstraint;
#define LOOM_TypeConstraint_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_TypeConstraint, dtype_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_TypeConstraint, dtype_count);

typedef struct LOOM_Kernel_Create_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const void* kernel_def_state;  /* in: LOOM_KernelDef.state */
  const LOOM_NodeView* node;     /* in: lives only during the call */
  void* kernel;                  /* out: per-node kernel object */
} LOOM_Kernel_Create_Args;
#define LOOM_Kernel_Create_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Kernel_Create_Args, kernel)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Kernel_Create_Args, kernel);

#define LOOM_OPSET_OPEN_END 0x7fffffff

typedef struct LOOM_KernelDef {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView domain;    /* "" for ONNX */
  LOOM_StringView op_type;
  int32_t since_version;     /* first opset served */
  int32_t end_version;       /* last opset served, or LOOM_OPSET_OPEN_END */
  /* Array of pointers (elements may be newer, larger structs); may be NULL
   * when count is 0. Lives as long as the table. */
  const LOOM_TypeConstraint* const* constraints;
  uint64_t constraint_count;
  const void* state;         /* passed to create; owned by the EP */
  /* Creates the per-node kernel object once per session (serialised per
   * EP). Required. */
  LOOM_Status* (*create)(LOOM_Kernel_Create_Args* args);
  /* Runs the node. May be called concurrently on the same kernel object from
   * different runs, so the kernel object must not be mutated here. Required. */
  LOOM_Status* (*compute)(const void* kernel, LOOM_KernelContext* ctx);
  /* Releases what create made. Required. */
  void (*release)(void* kernel);
  /* Optional: in-place pairs, flattened (input, output, input, output...):
   * output `output` may be given input `input`'s buffer when that input is
   * an intermediate the host would drop after this step and both take the
   * same bytes. The kernel must then be correct with the two aliased (an
   * element-wise kernel that reads element i before writing element i is).
   * NULL / 0 for none. Lives as long as the table. */
  const int32_t* inplace_pairs;
  uint64_t inplace_pair_count; /* pairs, not int32 values */
  /* Optional (0.2): indices of inputs the kernel reads on the host while
   * compute runs (shape-like operands of a device kernel: a Reshape's
   * shape, a Slice's starts). The host binds them in host memory whatever
   * memory the EP's other values live in: a constant stays where it is,
   * and a value made on an asynchronous stream is copied to the host and
   * waited for by the host before compute is called. NULL / 0 for none.
   * Lives as long as the table. */
  const int32_t* host_inputs;
  uint64_t host_input_count;
  /* Optional (0.2): indices of outputs the kernel writes on the host during
   * compute (a Shape's dims): allocated in host memory and complete when
   * compute returns, so no reader waits on the EP's stream for them. NULL /
   * 0 for none. Lives as long as the table. */
  const int32_t* host_outputs;
  uint64_t host_output_count;
} LOOM_KernelDef;
#define LOOM_KernelDef_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_KernelDef, host_output_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_KernelDef, host_output_count);

#endif /* LOOM_ABI_KERNEL_H */
