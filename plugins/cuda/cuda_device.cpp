#include "cuda_device.h"

#include <string>

#include "cuda_check.h"

namespace loom::cuda {
namespace {

struct StreamState {
  int device;
  cudaStream_t stream;
};

struct EventState {
  int device;
  cudaEvent_t event;
};

bool is_device(const LOOM_MemoryInfo* m) { return m != nullptr && sdk::from_view(m->name) == kMemoryName; }
bool is_host(const LOOM_MemoryInfo* m) { return m != nullptr && sdk::from_view(m->name) == "cpu"; }

void* device_alloc(void* state, uint64_t bytes, uint64_t) {
  // cudaMalloc aligns to at least 256 bytes, more than any kernel asks.
  if (cudaSetDevice(*static_cast<int*>(state)) != cudaSuccess) return nullptr;
  void* p = nullptr;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
}

void device_free(void* state, void* p) {
  if (p == nullptr) return;
  cudaSetDevice(*static_cast<int*>(state));
  cudaFree(p);
}

int32_t can_copy(void*, const LOOM_MemoryInfo* src, const LOOM_MemoryInfo* dst) {
  return (is_device(src) || is_host(src)) && (is_device(dst) || is_host(dst)) && (is_device(src) || is_device(dst));
}

// On a stream, cudaMemcpyAsync from pageable host memory returns once the
// source is staged, and to pageable host memory once the copy is done: both
// keep the contract of LOOM_DataTransfer_Copy_Args.
LOOM_Status* copy(void* state, const LOOM_DataTransfer_Copy_Args* a) {
  if (!can_copy(state, a->src_memory, a->dst_memory))
    return sdk::make_status(LOOM_STATUS_INVALID_ARGUMENT, "cuda: cannot copy between these memories");
  if (LOOM_Status* s = status_of(cudaSetDevice(*static_cast<int*>(state)), "cudaSetDevice")) return s;
  const cudaMemcpyKind kind = is_host(a->src_memory)   ? cudaMemcpyHostToDevice
                              : is_host(a->dst_memory) ? cudaMemcpyDeviceToHost
                                                       : cudaMemcpyDeviceToDevice;
  if (a->stream == nullptr) return status_of(cudaMemcpy(a->dst, a->src, a->bytes, kind), "cudaMemcpy");
  return status_of(cudaMemcpyAsync(a->dst, a->src, a->bytes, kind, native(a->stream)), "cudaMemcpyAsync");
}

}  // namespace

cudaStream_t native(LOOM_Stream* stream) {
  return stream == nullptr ? nullptr : static_cast<StreamState*>(stream->state)->stream;
}

DeviceObjects::DeviceObjects(int device) : device_(device) {
  memory_.struct_size = LOOM_MemoryInfo_STRUCT_SIZE;
  memory_.name = sdk::to_view(kMemoryName);
  memory_.device_id = device;
  memory_.host_accessible = 0;
  allocator_.struct_size = LOOM_Allocator_STRUCT_SIZE;
  allocator_.state = &device_;
  allocator_.memory = &memory_;
  allocator_.alloc = device_alloc;
  allocator_.free = device_free;
  transfer_.struct_size = LOOM_DataTransfer_STRUCT_SIZE;
  transfer_.state = &device_;
  transfer_.can_copy = can_copy;
  transfer_.copy = copy;
}

LOOM_Stream* DeviceObjects::create_stream() const {
  if (cudaSetDevice(device_) != cudaSuccess) return nullptr;
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  auto* stream = new LOOM_Stream{};
  stream->struct_size = LOOM_Stream_STRUCT_SIZE;
  stream->state = new StreamState{device_, s};
  stream->synchronize = [](void* st) noexcept -> LOOM_Status* {
    auto* state = static_cast<StreamState*>(st);
    return status_of(cudaStreamSynchronize(state->stream), "cudaStreamSynchronize");
  };
  stream->release = [](LOOM_Stream* self) noexcept {
    auto* state = static_cast<StreamState*>(self->state);
    cudaSetDevice(state->device);
    cudaStreamDestroy(state->stream);
    delete state;
    delete self;
  };
  return stream;
}

LOOM_Event* DeviceObjects::create_event() const {
  if (cudaSetDevice(device_) != cudaSuccess) return nullptr;
  cudaEvent_t e = nullptr;
  if (cudaEventCreate(&e) != cudaSuccess) return nullptr;  // with timing, for elapsed_us
  auto* event = new LOOM_Event{};
  event->struct_size = LOOM_Event_STRUCT_SIZE;
  event->state = new EventState{device_, e};
  event->record = [](void* st, LOOM_Stream* stream) noexcept -> LOOM_Status* {
    return status_of(cudaEventRecord(static_cast<EventState*>(st)->event, native(stream)), "cudaEventRecord");
  };
  event->wait = [](void* st, LOOM_Stream* stream) noexcept -> LOOM_Status* {
    return status_of(cudaStreamWaitEvent(native(stream), static_cast<EventState*>(st)->event, 0),
                     "cudaStreamWaitEvent");
  };
  event->synchronize = [](void* st) noexcept -> LOOM_Status* {
    return status_of(cudaEventSynchronize(static_cast<EventState*>(st)->event), "cudaEventSynchronize");
  };
  event->elapsed_us = [](void* st, void* start, double* us) noexcept -> LOOM_Status* {
    float ms = 0;
    LOOM_Status* s = status_of(
        cudaEventElapsedTime(&ms, static_cast<EventState*>(start)->event, static_cast<EventState*>(st)->event),
        "cudaEventElapsedTime");
    if (s == nullptr) *us = static_cast<double>(ms) * 1000.0;
    return s;
  };
  event->release = [](LOOM_Event* self) noexcept {
    auto* state = static_cast<EventState*>(self->state);
    cudaSetDevice(state->device);
    cudaEventDestroy(state->event);
    delete state;
    delete self;
  };
  return event;
}

}  // namespace loom::cuda
