/* Loom plugin ABI: the plugin entry point, version negotiation and the
 * plugin table.
 *
 * A plugin exports one C symbol, LOOM_PLUGIN_ENTRY_SYMBOL, of type
 * LOOM_PluginEntryFn. The host calls it once after loading; the plugin fills
 * args->plugin with a table that lives until the library is unloaded.
 */
#ifndef LOOM_ABI_PLUGIN_H
#define LOOM_ABI_PLUGIN_H

#include "loom/abi/ep.h"

#define LOOM_PLUGIN_ENTRY_SYMBOL "loom_plugin_entry"

/* --- custom-op domains --- */

/* How a formal input or output of a custom op may be given (int32 values). */
#define LOOM_FORMAL_SINGLE 0   /* exactly one value */
#define LOOM_FORMAL_OPTIONAL 1 /* may be omitted: an empty name, or absent at the end */
#define LOOM_FORMAL_VARIADIC 2 /* one or more values, all of one element type; last formal only */

/* One formal input or output of a custom op (0.2). */
typedef struct LOOM_FormalParameter {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView name;       /* for messages, e.g. "X" */
  /* A type parameter named in the schema's type_constraints (e.g. "T"):
   * values bound to one parameter share one element type, one of the
   * allowed ones. Empty: any element type, unrelated to the others. */
  LOOM_StringView type_param;
  int32_t option;             /* LOOM_FORMAL_* */
} LOOM_FormalParameter;
#define LOOM_FormalParameter_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_FormalParameter, option)
LOOM_DECLARE_STRUCT_SIZE(LOOM_FormalParameter, option);

/* One attribute a custom op reads (0.2). */
typedef struct LOOM_AttributeSchema {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView name;
  int32_t type;     /* LOOM_ATTR_* */
  int32_t required; /* nonzero: a node without it is refused at load */
} LOOM_AttributeSchema;
#define LOOM_AttributeSchema_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_AttributeSchema, required)
LOOM_DECLARE_STRUCT_SIZE(LOOM_AttributeSchema, required);

/* Where a shape-inference function writes the outputs' types (host object). */
typedef struct LOOM_ShapeInferenceSink LOOM_ShapeInferenceSink;

/* Arguments of LOOM_CustomOpSchema.infer_shapes (0.2). */
typedef struct LOOM_CustomOp_InferShapes_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const void* op_state; /* in: LOOM_CustomOpSchema.state */
  /* in: the node, valid only during the call. Its inputs' element types,
   * shapes and (for small constant inputs) data as far as inference knows
   * them; an input of unknown type and an omitted optional input both read
   * as LOOM_DTYPE_UNDEFINED. Its attributes are the ones the schema
   * declares. Node and value names may be synthetic here. */
  const LOOM_NodeView* node;
  LOOM_ShapeInferenceSink* sink; /* in */
  /* in: sets output `index`: element type (LOOM_DTYPE_UNDEFINED leaves it
   * to the type constraints) and shape (rank -1: unknown rank; a dim of -1:
   * unknown; dims may be NULL when rank <= 0). Returns NULL or an error
   * (bad index, unknown dtype, rank < -1). */
  LOOM_Status* (*set_output)(LOOM_ShapeInferenceSink* sink, uint64_t index, int32_t dtype, const int64_t* dims,
                             int64_t rank);
} LOOM_CustomOp_InferShapes_Args;
#define LOOM_CustomOp_InferShapes_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_CustomOp_InferShapes_Args, set_output)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CustomOp_InferShapes_Args, set_output);

/* Schema of one custom op. The host validates it when the plugin loads (a
 * domain with an invalid schema is refused, with the reason in the plugin
 * report) and checks every node of the domain against it when a model
 * loads: arity, attributes and element types. */
typedef struct LOOM_CustomOpSchema {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView op_type;
  int32_t since_version;
  int32_t min_inputs;
  int32_t max_inputs;  /* -1 for variadic */
  int32_t min_outputs;
  int32_t max_outputs; /* -1 for variadic */
  /* --- 0.2 --- A plugin that writes these declares its op completely:
   * attributes not listed are refused at load. */
  /* Formal inputs / outputs (arrays of pointers; NULL with count 0 when the
   * op has none). The arity they imply must equal min/max above. */
  const LOOM_FormalParameter* const* inputs;
  uint64_t input_count;
  const LOOM_FormalParameter* const* outputs;
  uint64_t output_count;
  /* Allowed element types of each type parameter the formals name. */
  const LOOM_TypeConstraint* const* type_constraints;
  uint64_t type_constraint_count;
  const LOOM_AttributeSchema* const* attributes;
  uint64_t attribute_count;
  const void* state; /* passed to infer_shapes; owned by the plugin */
  /* Optional: computes the outputs' types and shapes from the node. NULL
   * means the output shapes are dynamic (known when a kernel allocates
   * them); element types still follow the type constraints (an output
   * whose parameter an input shares, or that allows one type). Called
   * during model loading and graph rewriting, from any thread and possibly
   * concurrently (sessions load in parallel), so it must not mutate shared
   * state; must not keep the node. An error refuses the model, naming the
   * node. */
  LOOM_Status* (*infer_shapes)(LOOM_CustomOp_InferShapes_Args* args);
} LOOM_CustomOpSchema;
#define LOOM_CustomOpSchema_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_CustomOpSchema, infer_shapes)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CustomOpSchema, infer_shapes);

/* A kernel of a custom op for one provider (0.2). */
typedef struct LOOM_CustomOpKernel {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  /* The provider (EP name, e.g. "cpu_onednn") whose sessions may run it,
   * with that EP's memory and stream; empty: every EP whose memory the host
   * can read (a CPU kernel). The host adds it to that EP's kernel table. */
  LOOM_StringView provider;
  /* domain: the domain's name; op_type: one of its ops. Several kernels of
   * one op with different type constraints are type variants. */
  const LOOM_KernelDef* kernel;
} LOOM_CustomOpKernel;
#define LOOM_CustomOpKernel_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_CustomOpKernel, kernel)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CustomOpKernel, kernel);

typedef struct LOOM_CustomOpDomain {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView domain;
  const LOOM_CustomOpSchema* const* ops; /* array of pointers; lives as long as the plugin state */
  uint64_t op_count;
  /* --- 0.2 --- */
  const LOOM_CustomOpKernel* const* kernels; /* array of pointers; lives as long as the plugin state */
  uint64_t kernel_count;
} LOOM_CustomOpDomain;
#define LOOM_CustomOpDomain_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_CustomOpDomain, kernel_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CustomOpDomain, kernel_count);

/* --- plugin table --- */

typedef struct LOOM_Plugin_Init_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  uint32_t agreed_minor; /* in: min(host minor, plugin minor) */
  void* plugin_state;    /* out: passed to every other plugin slot */
} LOOM_Plugin_Init_Args;
#define LOOM_Plugin_Init_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Plugin_Init_Args, plugin_state)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Plugin_Init_Args, plugin_state);

typedef struct LOOM_Plugin_GetEpFactories_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_EpFactory* const* factories; /* out: lives as long as the plugin state */
  uint64_t factory_count;                 /* out */
} LOOM_Plugin_GetEpFactories_Args;
#define LOOM_Plugin_GetEpFactories_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_Plugin_GetEpFactories_Args, factory_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Plugin_GetEpFactories_Args, factory_count);

typedef struct LOOM_Plugin_GetCustomOpDomains_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_CustomOpDomain* const* domains; /* out: lives as long as the plugin state */
  uint64_t domain_count;                     /* out */
} LOOM_Plugin_GetCustomOpDomains_Args;
#define LOOM_Plugin_GetCustomOpDomains_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_Plugin_GetCustomOpDomains_Args, domain_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Plugin_GetCustomOpDomains_Args, domain_count);

/* The plugin's table. Required slots: init, release, get_ep_factories. */
typedef struct LOOM_PluginApi {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  uint32_t abi_major; /* headers the plugin was built with */
  uint32_t abi_minor;
  LOOM_StringView name;    /* lives as long as the library is loaded */
  LOOM_StringView version; /* the plugin's own version, free form */
  /* Called once; a failing init refuses the plugin. */
  LOOM_Status* (*init)(LOOM_Plugin_Init_Args* args);
  /* Called once, last; after it returns no object of the plugin is used. */
  void (*release)(void* plugin_state);
  LOOM_Status* (*get_ep_factories)(void* plugin_state, LOOM_Plugin_GetEpFactories_Args* args);
  /* Optional. */
  LOOM_Status* (*get_custom_op_domains)(void* plugin_state,
                                        LOOM_Plugin_GetCustomOpDomains_Args* args);
  /* Optional, for variant builds of one plugin (say generic and AVX-512)
   * placed in one directory: how well this build suits this machine, 0 if it
   * cannot run here, larger is better; absent reads as 1. Called before
   * init, from one thread; must only inspect the machine (e.g. CPUID). Of
   * the plugins with the same name in a directory the host initialises only
   * the highest-scoring one (the first in file order on a tie) and reports
   * the others as not chosen. */
  int32_t (*score)(void);
} LOOM_PluginApi;
#define LOOM_PluginApi_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_PluginApi, score)
LOOM_DECLARE_STRUCT_SIZE(LOOM_PluginApi, score);

typedef struct LOOM_PluginEntry_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_HostApi* host;     /* in: lives until the plugin's release returns */
  const LOOM_PluginApi* plugin; /* out: lives until the library is unloaded */
} LOOM_PluginEntry_Args;
#define LOOM_PluginEntry_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_PluginEntry_Args, plugin)
LOOM_DECLARE_STRUCT_SIZE(LOOM_PluginEntry_Args, plugin);

/* The host checks the plugin's abi_major against its own after the call and
 * refuses a mismatch; the plugin may also return an error status itself. */
typedef LOOM_Status* (*LOOM_PluginEntryFn)(LOOM_PluginEntry_Args* args);

#endif /* LOOM_ABI_PLUGIN_H */
