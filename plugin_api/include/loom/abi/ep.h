/* Loom plugin ABI: EP factories, devices, EP instances, capability and
 * compiled partitions.
 *
 * Objects from outside in: plugin -> EP factory -> device -> EP instance
 * (one per session) -> kernel / compiled partition -> per-run state.
 */
#ifndef LOOM_ABI_EP_H
#define LOOM_ABI_EP_H

#include "loom/abi/device.h"
#include "loom/abi/host.h"
#include "loom/abi/kernel.h"

/* --- compiled partitions (compiling EPs) --- */

typedef struct LOOM_CompiledPartition_CreateState_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* run_state; /* out: per-run state, NULL allowed */
} LOOM_CompiledPartition_CreateState_Args;
#define LOOM_CompiledPartition_CreateState_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_CompiledPartition_CreateState_Args, run_state)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CompiledPartition_CreateState_Args, run_state);

/* A fused subgraph compiled by an EP. Its kernel context's inputs and outputs
 * are the subgraph view's inputs and outputs, in order. Released through its
 * own release slot by the core, after every run state is released. */
typedef struct LOOM_CompiledPartition {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* state;
  /* Called once per run that uses the partition (may run concurrently). */
  LOOM_Status* (*create_state)(void* state, LOOM_CompiledPartition_CreateState_Args* args);
  /* May run concurrently on different run states. */
  LOOM_Status* (*compute)(void* state, void* run_state, LOOM_KernelContext* ctx);
  void (*release_state)(void* state, void* run_state);
  void (*release)(struct LOOM_CompiledPartition* partition);
} LOOM_CompiledPartition;
#define LOOM_CompiledPartition_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_CompiledPartition, release)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CompiledPartition, release);

/* --- EP instance --- */

typedef struct LOOM_Ep_GetCapability_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_GraphView* graph; /* in: lives during the call */
  LOOM_ClaimSink* sink;        /* in: pass to host->claim_nodes */
} LOOM_Ep_GetCapability_Args;
#define LOOM_Ep_GetCapability_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_Ep_GetCapability_Args, sink)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Ep_GetCapability_Args, sink);

typedef struct LOOM_Ep_GetKernelTable_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_KernelDef* const* kernels; /* out: lives as long as the EP */
  uint64_t kernel_count;                /* out */
} LOOM_Ep_GetKernelTable_Args;
#define LOOM_Ep_GetKernelTable_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_Ep_GetKernelTable_Args, kernel_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Ep_GetKernelTable_Args, kernel_count);

typedef struct LOOM_Ep_Compile_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_GraphView* subgraph;     /* in: the fused nodes; lives during the call */
  LOOM_CompiledPartition* partition;  /* out */
} LOOM_Ep_Compile_Args;
#define LOOM_Ep_Compile_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Ep_Compile_Args, partition)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Ep_Compile_Args, partition);

/* Defined below, with the capture slots of LOOM_Ep. */
typedef struct LOOM_Ep_BeginCapture_Args LOOM_Ep_BeginCapture_Args;
typedef struct LOOM_Ep_EndCapture_Args LOOM_Ep_EndCapture_Args;

/* One EP instance, created per session. Unless stated, slots are serialised
 * per EP by the core. Optional slots may be NULL. */
typedef struct LOOM_Ep {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* state;
  /* Optional: claims nodes or fused sets. An EP with a kernel table and no
   * get_capability is offered every node its table matches. */
  LOOM_Status* (*get_capability)(void* state, LOOM_Ep_GetCapability_Args* args);
  /* Optional: the static kernel table (kernel EP). */
  LOOM_Status* (*get_kernel_table)(void* state, LOOM_Ep_GetKernelTable_Args* args);
  /* Optional (required if get_capability ever claims LOOM_CLAIM_FUSED). */
  LOOM_Status* (*compile)(void* state, LOOM_Ep_Compile_Args* args);
  /* Optional: allocator for the EP's device memory; NULL means host memory.
   * Lives as long as the EP. Thread-safe accessor. */
  const LOOM_Allocator* (*get_allocator)(void* state);
  /* Optional: copies between the EP's memory and host memory. Lives as long
   * as the EP. Thread-safe accessor. */
  const LOOM_DataTransfer* (*get_data_transfer)(void* state);
  /* Optional: a new stream for asynchronous work (released by its own slot).
   * Returns NULL when the EP runs synchronously. */
  LOOM_Stream* (*create_stream)(void* state);
  /* Optional: a new event (released by its own slot). */
  LOOM_Event* (*create_event)(void* state);
  /* LOOM_EP_FLAG_* bits (0, the default, for none). */
  uint64_t flags;
  /* --- capture of runs (0.2; optional, with LOOM_EP_FLAG_CAPTURE_RUNS) ---
   * begin_capture: the work queued on args->stream from now until
   * end_capture is recorded instead of run (a CUDA graph capture): kernels
   * launched meanwhile compute nothing yet. end_capture: stops recording
   * and returns the recording, which the host replays on later runs with
   * the same shapes (same kernels, same buffers) instead of launching each
   * step; on failure (work that cannot be recorded, such as a host wait)
   * it returns a status and no recording, the stream is usable again and
   * the recorded work never ran. */
  LOOM_Status* (*begin_capture)(void* state, LOOM_Ep_BeginCapture_Args* args);
  LOOM_Status* (*end_capture)(void* state, LOOM_Ep_EndCapture_Args* args);
} LOOM_Ep;
#define LOOM_Ep_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Ep, end_capture)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Ep, end_capture);

/* Recorded work of one stream (LOOM_Ep.end_capture). Lives until released
 * by its own slot; the host releases it before the EP. (0.2) */
typedef struct LOOM_CapturedWork {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* state;
  /* Queues the recorded work on `stream` (a stream of the EP that made
   * it), after the work queued there so far. Not called concurrently for
   * one recording. */
  LOOM_Status* (*replay)(void* state, LOOM_Stream* stream);
  void (*release)(struct LOOM_CapturedWork* self);
} LOOM_CapturedWork;
#define LOOM_CapturedWork_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_CapturedWork, release)
LOOM_DECLARE_STRUCT_SIZE(LOOM_CapturedWork, release);

struct LOOM_Ep_BeginCapture_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_Stream* stream;  /* in: a stream of this EP */
};
#define LOOM_Ep_BeginCapture_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Ep_BeginCapture_Args, stream)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Ep_BeginCapture_Args, stream);

struct LOOM_Ep_EndCapture_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_Stream* stream;          /* in: the stream begin_capture was given */
  LOOM_CapturedWork* captured;  /* out: owned by the host */
};
#define LOOM_Ep_EndCapture_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Ep_EndCapture_Args, captured)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Ep_EndCapture_Args, captured);

/* The EP's kernels and compiled partitions must not run concurrently (say,
 * a device library that is not thread-safe): the host runs at most one of
 * this EP's steps at a time, across all runs and sessions of the EP. */
#define LOOM_EP_FLAG_NO_CONCURRENT_RUNS 1u
/* The EP asks the host to record runs once and replay them (its
 * begin_capture / end_capture are set): the host does so for plans whose
 * device work is all this EP's, on one stream, with fixed shapes. (0.2) */
#define LOOM_EP_FLAG_CAPTURE_RUNS 2u

/* --- EP factory and devices --- */

typedef struct LOOM_DeviceInfo {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  LOOM_StringView name;           /* e.g. "cpu", "NVIDIA H100" */
  const LOOM_MemoryInfo* memory;  /* the memory its kernels use; lives as long as the factory */
} LOOM_DeviceInfo;
#define LOOM_DeviceInfo_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_DeviceInfo, memory)
LOOM_DECLARE_STRUCT_SIZE(LOOM_DeviceInfo, memory);

typedef struct LOOM_EpFactory_GetDevices_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  /* out: array of pointers (elements may be newer, larger structs); lives
   * as long as the factory */
  const LOOM_DeviceInfo* const* devices;
  uint64_t device_count;          /* out: 0 when the hardware is absent */
  /* out: when device_count is 0, why (e.g. "no CUDA driver"); lives as long
   * as the factory. */
  LOOM_StringView unavailable_reason;
  /* in (0.2): the provider's options from the configuration, as create_ep
   * will get them (e.g. a virtual device for placement without hardware);
   * live during the call. get_devices is called once per factory. */
  const LOOM_KeyValue* options;
  uint64_t option_count;
} LOOM_EpFactory_GetDevices_Args;
#define LOOM_EpFactory_GetDevices_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_EpFactory_GetDevices_Args, option_count)
LOOM_DECLARE_STRUCT_SIZE(LOOM_EpFactory_GetDevices_Args, option_count);

typedef struct LOOM_EpFactory_CreateEp_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  uint64_t device_index;          /* in: index into get_devices' array */
  const LOOM_KeyValue* options;   /* in: per-EP options; live during the call */
  uint64_t option_count;
  LOOM_Ep* ep;                    /* out: released through release_ep */
} LOOM_EpFactory_CreateEp_Args;
#define LOOM_EpFactory_CreateEp_Args_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_EpFactory_CreateEp_Args, ep)
LOOM_DECLARE_STRUCT_SIZE(LOOM_EpFactory_CreateEp_Args, ep);

/* Lives as long as the plugin state. Slots are thread-safe. */
typedef struct LOOM_EpFactory {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* state;
  LOOM_StringView name; /* provider name used in configs, e.g. "reference" */
  LOOM_Status* (*get_devices)(void* state, LOOM_EpFactory_GetDevices_Args* args);
  LOOM_Status* (*create_ep)(void* state, LOOM_EpFactory_CreateEp_Args* args);
  void (*release_ep)(void* state, LOOM_Ep* ep);
} LOOM_EpFactory;
#define LOOM_EpFactory_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_EpFactory, release_ep)
LOOM_DECLARE_STRUCT_SIZE(LOOM_EpFactory, release_ep);

#endif /* LOOM_ABI_EP_H */
