/* Loom plugin ABI: the host function table.
 *
 * Everything the core offers a plugin comes through LOOM_HostApi; plugins
 * never link against the core. The table lives from the plugin entry call
 * until the plugin's release slot returns.
 *
 * Accessors here are positional and frozen once released (see base.h).
 * Unless stated otherwise, pointers and string views they return live as
 * long as the object they were read from.
 */
#ifndef LOOM_ABI_HOST_H
#define LOOM_ABI_HOST_H

#include "loom/abi/base.h"

/* Opaque host objects handed to plugins. */
typedef struct LOOM_GraphView LOOM_GraphView; /* read-only graph or subgraph */
typedef struct LOOM_NodeView LOOM_NodeView;   /* read-only node */
typedef struct LOOM_Tensor LOOM_Tensor;       /* tensor (dtype, dims, data) */
typedef struct LOOM_KernelContext LOOM_KernelContext; /* one compute call */
typedef struct LOOM_ClaimSink LOOM_ClaimSink; /* collects capability claims */
typedef struct LOOM_Stream LOOM_Stream;       /* defined in device.h */
/* A runtime value: a tensor, a map (0.2), a sequence of tensors or of maps,
 * or nothing (an empty optional). Values made by value_create_* are owned by
 * the caller until handed on (kernel_set_output, value_sequence_append,
 * value_create_map) or released. */
typedef struct LOOM_Value LOOM_Value;

/* Value kinds (int32_t). */
#define LOOM_VALUE_NONE 0     /* empty optional (or an omitted input) */
#define LOOM_VALUE_TENSOR 1
#define LOOM_VALUE_SEQUENCE 2
/* 0.2: ONNX's map (ai.onnx.ml: ZipMap's output, DictVectorizer's and
 * CastMap's input): two 1-D tensors of one length, keys (int64 or string)
 * and values, pair i being keys[i] -> values[i]. */
#define LOOM_VALUE_MAP 3

/* Attribute types (int32_t); the values are ONNX AttributeProto's. */
#define LOOM_ATTR_UNDEFINED 0
#define LOOM_ATTR_FLOAT 1
#define LOOM_ATTR_INT 2
#define LOOM_ATTR_STRING 3
#define LOOM_ATTR_TENSOR 4
#define LOOM_ATTR_GRAPH 5
#define LOOM_ATTR_FLOATS 6
#define LOOM_ATTR_INTS 7
#define LOOM_ATTR_STRINGS 8
#define LOOM_ATTR_TENSORS 9
#define LOOM_ATTR_GRAPHS 10

/* Claim kinds (int32_t) for claim_nodes. */
#define LOOM_CLAIM_KERNEL 0 /* one node, served by the EP's kernel table */
#define LOOM_CLAIM_FUSED 1  /* a set of nodes, compiled into one partition */

typedef struct LOOM_HostApi {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  uint32_t abi_major; /* headers the host was built with */
  uint32_t abi_minor;

  /* --- status (thread-safe) --- */
  /* Creates a status; the message is copied. code must not be OK. */
  LOOM_Status* (*status_create)(int32_t code, LOOM_StringView message);
  void (*status_release)(LOOM_Status* status);
  int32_t (*status_code)(const LOOM_Status* status);
  /* Lives until the status is released. */
  LOOM_StringView (*status_message)(const LOOM_Status* status);

  /* --- logging (thread-safe) --- */
  /* `source` names the plugin or EP; both strings are copied. */
  void (*log)(int32_t level, LOOM_StringView source, LOOM_StringView message);
  /* Messages below this level are dropped; check before formatting. */
  int32_t (*log_level)(void);

  /* --- graph view (read-only; safe from any thread while the view lives) --- */
  uint64_t (*graph_node_count)(const LOOM_GraphView* graph);
  const LOOM_NodeView* (*graph_node)(const LOOM_GraphView* graph, uint64_t index);
  uint64_t (*graph_input_count)(const LOOM_GraphView* graph);
  LOOM_StringView (*graph_input_name)(const LOOM_GraphView* graph, uint64_t index);
  uint64_t (*graph_output_count)(const LOOM_GraphView* graph);
  LOOM_StringView (*graph_output_name)(const LOOM_GraphView* graph, uint64_t index);
  /* Opset version the model imports for `domain` ("" and "ai.onnx" are the
   * same domain); 0 if not imported. */
  int64_t (*graph_opset)(const LOOM_GraphView* graph, LOOM_StringView domain);

  /* --- node view --- */
  /* Stable id of the node inside its graph; used in claims. */
  uint64_t (*node_id)(const LOOM_NodeView* node);
  LOOM_StringView (*node_name)(const LOOM_NodeView* node);
  LOOM_StringView (*node_op_type)(const LOOM_NodeView* node);
  LOOM_StringView (*node_domain)(const LOOM_NodeView* node); /* "" for ONNX */
  /* Opset version of the node's domain in the model. */
  int64_t (*node_opset)(const LOOM_NodeView* node);
  uint64_t (*node_input_count)(const LOOM_NodeView* node);
  /* Empty name means an omitted optional input. */
  LOOM_StringView (*node_input_name)(const LOOM_NodeView* node, uint64_t index);
  uint64_t (*node_output_count)(const LOOM_NodeView* node);
  LOOM_StringView (*node_output_name)(const LOOM_NodeView* node, uint64_t index);
  /* Static type of an input/output as known after shape inference.
   * dtype LOOM_DTYPE_UNDEFINED when unknown; rank -1 when unknown; a dim of
   * -1 is unknown (symbolic). The dims array lives as long as the view. */
  int32_t (*node_input_dtype)(const LOOM_NodeView* node, uint64_t index);
  int32_t (*node_output_dtype)(const LOOM_NodeView* node, uint64_t index);
  int64_t (*node_input_shape)(const LOOM_NodeView* node, uint64_t index,
                              const int64_t** dims);
  /* Constant data of an input when it is an initializer that runs cannot
   * override (one the graph does not also list as an input), else NULL. */
  const LOOM_Tensor* (*node_input_constant)(const LOOM_NodeView* node, uint64_t index);

  /* --- node attributes ---
   * Getters return 1 and write *out when the attribute exists with the
   * requested type, else return 0 and leave *out untouched. */
  uint64_t (*node_attr_count)(const LOOM_NodeView* node);
  LOOM_StringView (*node_attr_name)(const LOOM_NodeView* node, uint64_t index);
  /* LOOM_ATTR_* of the named attribute, LOOM_ATTR_UNDEFINED if absent. */
  int32_t (*node_attr_type)(const LOOM_NodeView* node, LOOM_StringView name);
  int32_t (*node_attr_int)(const LOOM_NodeView* node, LOOM_StringView name, int64_t* out);
  int32_t (*node_attr_float)(const LOOM_NodeView* node, LOOM_StringView name, float* out);
  int32_t (*node_attr_string)(const LOOM_NodeView* node, LOOM_StringView name,
                              LOOM_StringView* out);
  int32_t (*node_attr_ints)(const LOOM_NodeView* node, LOOM_StringView name,
                            const int64_t** values, uint64_t* count);
  int32_t (*node_attr_floats)(const LOOM_NodeView* node, LOOM_StringView name,
                              const float** values, uint64_t* count);
  /* Number of strings in a STRINGS attribute; read each with node_attr_string_at. */
  int32_t (*node_attr_strings)(const LOOM_NodeView* node, LOOM_StringView name,
                               uint64_t* count);
  LOOM_StringView (*node_attr_string_at)(const LOOM_NodeView* node,
                                         LOOM_StringView name, uint64_t index);
  int32_t (*node_attr_tensor)(const LOOM_NodeView* node, LOOM_StringView name,
                              const LOOM_Tensor** out);
  int32_t (*node_attr_graph)(const LOOM_NodeView* node, LOOM_StringView name,
                             const LOOM_GraphView** out);

  /* --- capability claims (called from get_capability only) ---
   * Claims `count` nodes of the graph passed to get_capability, by node_id.
   * kind is LOOM_CLAIM_KERNEL (count must be 1) or LOOM_CLAIM_FUSED. The
   * reason is copied and shown in the placement report. */
  LOOM_Status* (*claim_nodes)(LOOM_ClaimSink* sink, int32_t kind,
                              const uint64_t* node_ids, uint64_t count,
                              LOOM_StringView reason);

  /* --- tensors (hot path; safe concurrently on different tensors) --- */
  int32_t (*tensor_dtype)(const LOOM_Tensor* tensor);
  uint64_t (*tensor_rank)(const LOOM_Tensor* tensor);
  const int64_t* (*tensor_dims)(const LOOM_Tensor* tensor);
  uint64_t (*tensor_element_count)(const LOOM_Tensor* tensor);
  /* Raw element data in the tensor's memory; NULL for STRING tensors and
   * for tensors with no elements. */
  void* (*tensor_data)(const LOOM_Tensor* tensor);
  const LOOM_MemoryInfo* (*tensor_memory)(const LOOM_Tensor* tensor);
  /* Element `index` of a STRING tensor; lives until the tensor is written. */
  LOOM_StringView (*tensor_string_at)(const LOOM_Tensor* tensor, uint64_t index);
  /* Writes element `index` of a STRING output tensor (the bytes are copied). */
  LOOM_Status* (*tensor_set_string)(LOOM_Tensor* tensor, uint64_t index,
                                    LOOM_StringView value);

  /* --- kernel context (hot path; a context is used by one thread) --- */
  uint64_t (*kernel_input_count)(const LOOM_KernelContext* ctx);
  /* NULL for an omitted optional input. Lives until compute returns. */
  const LOOM_Tensor* (*kernel_input)(const LOOM_KernelContext* ctx, uint64_t index);
  uint64_t (*kernel_output_count)(const LOOM_KernelContext* ctx);
  /* Allocates output `index` with element type `dtype` and the given dims
   * in the EP's memory (or hands out the planned buffer) and returns it.
   * dtype LOOM_DTYPE_UNDEFINED means the output's static type from shape
   * inference. Returns NULL if allocation failed, the index is out of range,
   * the type is unknown, or the output was already allocated (the kernel then
   * returns an error status). */
  LOOM_Tensor* (*kernel_output)(LOOM_KernelContext* ctx, uint64_t index, int32_t dtype,
                                const int64_t* dims, uint64_t rank);
  /* The node being computed (a kernel EP), or NULL in a compiled partition. */
  const LOOM_NodeView* (*kernel_node)(const LOOM_KernelContext* ctx);

  /* --- values: sequences, optionals, subgraphs (hot path where noted) ---
   * Input `index` as a value of any kind; NULL for an omitted input. Lives
   * until compute returns. kernel_input returns NULL for non-tensor values. */
  const LOOM_Value* (*kernel_input_value)(const LOOM_KernelContext* ctx, uint64_t index);
  int32_t (*value_kind)(const LOOM_Value* value);
  /* The tensor of a TENSOR value, else NULL. */
  const LOOM_Tensor* (*value_tensor)(const LOOM_Value* value);
  /* Element type of a SEQUENCE value (also when empty); for a sequence of
   * maps, the maps' value type. */
  int32_t (*value_sequence_dtype)(const LOOM_Value* value);
  uint64_t (*value_sequence_length)(const LOOM_Value* value);
  /* Element `index` of a SEQUENCE value (a TENSOR or MAP value), NULL if out of range. */
  const LOOM_Value* (*value_sequence_at)(const LOOM_Value* value, uint64_t index);
  /* New host-memory values, owned by the caller. NULL on failure (bad dims,
   * out of memory). A new tensor is zero-filled (strings empty). */
  LOOM_Value* (*value_create_tensor)(int32_t dtype, const int64_t* dims, uint64_t rank);
  LOOM_Value* (*value_create_sequence)(int32_t elem_dtype);
  LOOM_Value* (*value_create_none)(void);
  /* Deep copy into host memory; NULL on failure. */
  LOOM_Value* (*value_clone)(const LOOM_Value* value);
  /* The writable tensor of a TENSOR value the caller owns. */
  LOOM_Tensor* (*value_mutable_tensor)(LOOM_Value* value);
  /* Appends `element` (ownership passes to the sequence): a TENSOR value, or
   * (0.2) a MAP value whose values have the sequence's element type; one
   * sequence holds one kind. */
  LOOM_Status* (*value_sequence_append)(LOOM_Value* sequence, LOOM_Value* element);
  void (*value_release)(LOOM_Value* value);
  /* Sets output `index` to `value` (ownership passes to the host), instead
   * of kernel_output. The only way to produce sequences and empty optionals. */
  LOOM_Status* (*kernel_set_output)(LOOM_KernelContext* ctx, uint64_t index, LOOM_Value* value);
  /* Runs the subgraph in graph attribute `attr` of the node being computed
   * (If branches, Loop/Scan/SequenceMap bodies) on `inputs` (the subgraph's
   * formal inputs, in order; outer-scope values are supplied by the host) and
   * writes `output_count` new values, owned by the caller, to `outputs`.
   * The subgraph's nodes run on whatever EPs the session placed them on. */
  LOOM_Status* (*kernel_run_subgraph)(LOOM_KernelContext* ctx, LOOM_StringView attr,
                                      const LOOM_Value* const* inputs, uint64_t input_count,
                                      LOOM_Value** outputs, uint64_t output_count);

  /* --- capability (called from get_capability only) ---
   * Records why the EP does not claim these nodes; the reason (copied) is
   * shown in the placement report instead of "not claimed". Optional to call. */
  LOOM_Status* (*decline_nodes)(LOOM_ClaimSink* sink, const uint64_t* node_ids, uint64_t count,
                                LOOM_StringView reason);

  /* --- memory (compute; optional to call; check LOOM_HAS_FIELD) ---
   * The kernel or compiled partition keeps its own copy of constant input
   * `index` (an initializer, e.g. weights packed into its layout) and can
   * rebuild what it needs from that copy: the host may free its own once no
   * other step reads the initializer. The input stays in the context (dtype,
   * dims) but its data may be NULL from this call on (a data pointer taken
   * before is no longer valid), in later calls too, whatever the shapes. Ignored for inputs that are not constants, for constants
   * other steps read, and by hosts that keep every initializer. */
  void (*kernel_release_constant_input)(LOOM_KernelContext* ctx, uint64_t index);

  /* --- asynchronous execution (hot path; check LOOM_HAS_FIELD) ---
   * The stream (made by the EP's create_stream) this step is launched on, or
   * NULL when the EP runs synchronously. An asynchronous kernel or compiled
   * partition allocates its outputs (shapes must be known at launch), queues
   * the work that fills them on this stream and returns; the host orders
   * consumers on other streams (and the host) with the EP's events. Input
   * data stays valid until the queued work has run. Lives until compute
   * returns (the host may hand the same stream to later steps). */
  LOOM_Stream* (*kernel_stream)(const LOOM_KernelContext* ctx);

  /* --- scratch memory (compute; check LOOM_HAS_FIELD) (0.2) ---
   * `bytes` of working memory for this compute call (an im2col buffer, a
   * convolution workspace), in the memory the EP's values live in (device
   * memory for a device EP), aligned to 64 bytes. The host counts it
   * against the run's limits before allocating anything: a buffer over
   * limits.max_tensor_mb, or past the memory's arena limit, is refused.
   * Valid until compute returns; on an asynchronous stream, until the work
   * compute queued there has run (the host orders any reuse of the memory
   * after it). NULL on failure (the refusal's reason becomes part of the
   * step's error, with code OUT_OF_MEMORY); a non-NULL pointer for 0 bytes.
   * The host frees it: do not keep it past compute. */
  void* (*kernel_scratch)(LOOM_KernelContext* ctx, uint64_t bytes);

  /* --- stopping (compute, hot path; check LOOM_HAS_FIELD) (0.2) ---
   * Nonzero once the run this compute call belongs to is cancelled or past
   * its deadline (limits.run_timeout_ms). The host checks both between
   * steps; a kernel whose one call can run long (a window op over a huge
   * kernel, a large product on the host) polls this between chunks of its
   * work, about every millisecond, and on nonzero returns any error: the
   * host reports the run as cancelled or timed out. Cheap (a flag and a
   * clock read). */
  int32_t (*kernel_should_stop)(const LOOM_KernelContext* ctx);

  /* --- maps (0.2; check LOOM_HAS_FIELD) ---
   * A new MAP value from two TENSOR values the call takes ownership of (also
   * on error): `keys` 1-D int64 or string, `values` 1-D of the same length,
   * any element type. Written to *out, owned by the caller. */
  LOOM_Status* (*value_create_map)(LOOM_Value* keys, LOOM_Value* values, LOOM_Value** out);
  /* The keys / values of a MAP value (TENSOR values that live as long as the
   * map), else NULL. */
  const LOOM_Value* (*value_map_keys)(const LOOM_Value* map);
  const LOOM_Value* (*value_map_values)(const LOOM_Value* map);

  /* --- profiling (compute; check LOOM_HAS_FIELD) (0.2) ---
   * Nonzero when this run is profiled (config profiling.enabled). A
   * compiled partition, or a kernel that chooses among implementations,
   * then names the pieces of its work with kernel_profile_part, so the
   * profile shows what ran inside the step and which implementation was
   * chosen. Cheap (a pointer test): ask once per compute call. */
  int32_t (*kernel_profiling)(const LOOM_KernelContext* ctx);
  /* One piece of this step's work, from start_ns to end_ns on the host's
   * monotonic clock (CLOCK_MONOTONIC in nanoseconds, which is
   * std::chrono::steady_clock on Linux), named `name` (copied; say what ran
   * and for which node: "gemv MatMul_3", "build program"). The profile
   * draws it inside the step's span, on the step's lane; on an
   * asynchronous stream it is host time (the launch), not device time.
   * Ignored when the run is not profiled, and for a piece that ends before
   * it starts. May be called from any thread until compute returns. */
  void (*kernel_profile_part)(LOOM_KernelContext* ctx, LOOM_StringView name, uint64_t start_ns, uint64_t end_ns);

  /* --- pre-packing at compile time (LOOM_Ep.compile; check
   * LOOM_HAS_FIELD) (0.2) ---
   * The EP compiling `subgraph` keeps its own copy of the subgraph's input
   * `index` (an initializer it read through node_input_constant and packed
   * into its layout), as ONNX Runtime's kernels pre-pack their weights: the
   * host frees its copy now, at session creation, where no other step reads
   * the initializer. Call it as each weight is packed, so the originals are
   * never all held twice. Once freed, the LOOM_Tensor node_input_constant
   * gave for it points to no data, and the compiled partition's kernel
   * context presents the input with its dtype and dims only, as after
   * kernel_release_constant_input. Ignored for inputs that are not
   * initializers, for initializers other steps read, for EPs with their own
   * memory, outside compile, and by hosts that keep every initializer. */
  void (*graph_release_constant_input)(const LOOM_GraphView* subgraph, uint64_t index);
} LOOM_HostApi;
#define LOOM_HostApi_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_HostApi, graph_release_constant_input)
LOOM_DECLARE_STRUCT_SIZE(LOOM_HostApi, graph_release_constant_input);

#endif /* LOOM_ABI_HOST_H */
