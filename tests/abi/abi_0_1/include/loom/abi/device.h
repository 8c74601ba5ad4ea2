/* Loom plugin ABI: allocators, data transfer, streams and events. */
#ifndef LOOM_ABI_DEVICE_H
#define LOOM_ABI_DEVICE_H

#include "loom/abi/base.h"

/* Allocator for one memory kind. Lives as long as the EP that returned it.
 * alloc/free are thread-safe. */
typedef struct LOOM_Allocator {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* state;
  const LOOM_MemoryInfo* memory; /* lives as long as the allocator */
  /* Returns NULL on failure. alignment is a power of two. */
  void* (*alloc)(void* state, uint64_t bytes, uint64_t alignment);
  void (*free)(void* state, void* pointer);
} LOOM_Allocator;
#define LOOM_Allocator_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Allocator, free)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Allocator, free);

/* Asynchronous in-order queue of work on a device, made by an EP's
 * create_stream; the host keeps one per asynchronous EP for each run in
 * flight and reuses it across runs. */
typedef struct LOOM_Stream {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* state;
  /* Blocks until all work queued so far is done. Thread-safe. */
  LOOM_Status* (*synchronize)(void* state);
  void (*release)(struct LOOM_Stream* stream);
} LOOM_Stream;
#define LOOM_Stream_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Stream, release)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Stream, release);

/* A marker in a stream that other streams (or the host) can wait on. The
 * host records an event once per run at most and reuses it in later runs:
 * record re-arms it. record, wait and synchronize are called by one thread at
 * a time per event; synchronize after a record blocks until the stream has
 * reached the record point. */
typedef struct LOOM_Event {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* state;
  LOOM_Status* (*record)(void* state, LOOM_Stream* stream);
  /* Makes `stream` wait (without blocking the host) until the event fires. */
  LOOM_Status* (*wait)(void* state, LOOM_Stream* stream);
  /* Blocks the host until the event fires. */
  LOOM_Status* (*synchronize)(void* state);
  void (*release)(struct LOOM_Event* event);
  /* Optional (device timing for the profiler; NULL when the EP cannot time):
   * writes the device time in microseconds from event `start_state` (another
   * event of the same EP, recorded earlier on the same stream) firing to this
   * one firing. Both have fired (the host synchronized) when it is called. */
  LOOM_Status* (*elapsed_us)(void* state, void* start_state, double* microseconds);
} LOOM_Event;
#define LOOM_Event_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_Event, elapsed_us)
LOOM_DECLARE_STRUCT_SIZE(LOOM_Event, elapsed_us);

typedef struct LOOM_DataTransfer_Copy_Args {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  const LOOM_MemoryInfo* src_memory;
  const void* src;
  const LOOM_MemoryInfo* dst_memory;
  void* dst;
  uint64_t bytes;
  /* Stream to order the copy on, or NULL for a copy that is complete when
   * the call returns. With a stream, the copy runs after the work queued on
   * it so far and is complete when the stream reaches it: a host source may
   * be reused as soon as the call returns (the routine stages it if it must),
   * a host destination is written later (the host waits on an event before
   * reading it). */
  LOOM_Stream* stream;
} LOOM_DataTransfer_Copy_Args;
#define LOOM_DataTransfer_Copy_Args_STRUCT_SIZE \
  LOOM_STRUCT_SIZE(LOOM_DataTransfer_Copy_Args, stream)
LOOM_DECLARE_STRUCT_SIZE(LOOM_DataTransfer_Copy_Args, stream);

/* Copies bytes between memory kinds. Lives as long as the EP. Thread-safe. */
typedef struct LOOM_DataTransfer {
  uint64_t struct_size;
  const LOOM_Extension* ext;
  void* state;
  /* 1 if this routine copies from src to dst memory. */
  int32_t (*can_copy)(void* state, const LOOM_MemoryInfo* src,
                      const LOOM_MemoryInfo* dst);
  LOOM_Status* (*copy)(void* state, const LOOM_DataTransfer_Copy_Args* args);
} LOOM_DataTransfer;
#define LOOM_DataTransfer_STRUCT_SIZE LOOM_STRUCT_SIZE(LOOM_DataTransfer, copy)
LOOM_DECLARE_STRUCT_SIZE(LOOM_DataTransfer, copy);

#endif /* LOOM_ABI_DEVICE_H */
