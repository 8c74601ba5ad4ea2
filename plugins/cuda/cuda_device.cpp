#include "cuda_device.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "cuda_check.h"
#include "stream_resources.h"

namespace loom::cuda {
namespace {

struct EventState {
  int device;
  cudaEvent_t event;
};

bool is_device(const LOOM_MemoryInfo* m) { return m != nullptr && sdk::from_view(m->name) == kMemoryName; }
bool is_host(const LOOM_MemoryInfo* m) { return m != nullptr && sdk::from_view(m->name) == "cpu"; }

int device_of(void* state) { return static_cast<DeviceObjects::TransferState*>(state)->device; }

// Fills fresh memory with 0xFF bytes on a stream of its own, waited for at
// once: legal while another stream is being captured as a CUDA graph (a
// kernel's scratch may be allocated then), where a device-wide
// synchronization is not.
bool fill_poison(int device, void* p, uint64_t bytes) {
  static std::mutex mutex;
  static std::map<int, cudaStream_t> streams;
  std::lock_guard<std::mutex> lock(mutex);
  cudaStream_t& s = streams[device];
  if (s == nullptr && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    s = nullptr;
    return false;
  }
  return cudaMemsetAsync(p, 0xFF, bytes, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess;
}

}  // namespace

size_t free_device_memory(int device) {
  size_t free_bytes = 0, total = 0;
  if (device < 0 || cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    (void)cudaGetLastError();  // leave no error behind for the next call
    return 0;
  }
  return free_bytes;
}

namespace {

void* device_alloc(void* state, uint64_t bytes, uint64_t) {
  // cudaMalloc aligns to at least 256 bytes, more than any kernel asks.
  const int device = device_of(state);
  // A virtual device hands out host memory, so a run gets as far as its
  // first copy or launch and fails there with kVirtualDeviceMessage rather
  // than with a bare allocation failure.
  if (device < 0) return std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (cudaSetDevice(device) != cudaSuccess) return nullptr;
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
  // Tests (LOOM_CUDA_POISON=1) fill fresh memory with 0xFF bytes (NaN as
  // float16 / float32, -1 as integers), so an output element no kernel
  // writes cannot pass for a right answer.
  static const bool poison = [] {
    const char* v = std::getenv("LOOM_CUDA_POISON");
    return v != nullptr && std::string(v) == "1";
  }();
  if (poison && !fill_poison(device, p, bytes)) {
    cudaFree(p);
    return nullptr;
  }
  return p;
}

void device_free(void* state, void* p) {
  if (p == nullptr) return;
  if (device_of(state) < 0) return std::free(p);
  cudaSetDevice(device_of(state));
  cudaFree(p);
}

int32_t can_copy(void*, const LOOM_MemoryInfo* src, const LOOM_MemoryInfo* dst) {
  return (is_device(src) || is_host(src)) && (is_device(dst) || is_host(dst)) && (is_device(src) || is_device(dst));
}

// On a stream, host <-> device copies go through pinned staging blocks
// (the source may be reused at once; a host destination is written when the
// stream gets there), keeping the contract of LOOM_DataTransfer_Copy_Args.
LOOM_Status* copy(void* state, const LOOM_DataTransfer_Copy_Args* a) {
  if (!can_copy(state, a->src_memory, a->dst_memory))
    return sdk::make_status(LOOM_STATUS_INVALID_ARGUMENT, "cuda: cannot copy between these memories");
  auto& st = *static_cast<DeviceObjects::TransferState*>(state);
  if (st.device < 0) return sdk::make_status(LOOM_STATUS_NOT_IMPLEMENTED, kVirtualDeviceMessage);
  if (LOOM_Status* s = status_of(cudaSetDevice(st.device), "cudaSetDevice")) return s;
  const cudaMemcpyKind kind = is_host(a->src_memory)   ? cudaMemcpyHostToDevice
                              : is_host(a->dst_memory) ? cudaMemcpyDeviceToHost
                                                       : cudaMemcpyDeviceToDevice;
  if (a->stream == nullptr) return status_of(cudaMemcpy(a->dst, a->src, a->bytes, kind), "cudaMemcpy");
  const cudaStream_t stream = native(a->stream);
  if (kind == cudaMemcpyHostToDevice) return st.pinned->to_device(a->dst, a->src, a->bytes, stream);
  if (kind == cudaMemcpyDeviceToHost) return st.pinned->to_host(a->dst, a->src, a->bytes, stream);
  return status_of(cudaMemcpyAsync(a->dst, a->src, a->bytes, kind, stream), "cudaMemcpyAsync");
}

}  // namespace

cudaStream_t native(LOOM_Stream* stream) {
  return stream == nullptr ? nullptr : static_cast<StreamResources*>(stream->state)->stream();
}

// The allocator and transfer read their device from `transfer_state_`: -1
// on a virtual device, which they refuse (and which stages nothing).
DeviceObjects::DeviceObjects(int device, bool is_virtual, size_t staging_bytes, bool blocking_waits)
    : device_(device),
      virtual_(is_virtual),
      blocking_waits_(blocking_waits),
      transfer_state_{is_virtual ? -1 : device,
                      std::make_unique<PinnedTransfer>(device, is_virtual ? 0 : staging_bytes)} {
  memory_.struct_size = LOOM_MemoryInfo_STRUCT_SIZE;
  memory_.name = sdk::to_view(kMemoryName);
  memory_.device_id = device;
  memory_.host_accessible = 0;
  allocator_.struct_size = LOOM_Allocator_STRUCT_SIZE;
  allocator_.state = &transfer_state_;
  allocator_.memory = &memory_;
  allocator_.alloc = device_alloc;
  allocator_.free = device_free;
  transfer_.struct_size = LOOM_DataTransfer_STRUCT_SIZE;
  transfer_.state = &transfer_state_;
  transfer_.can_copy = can_copy;
  transfer_.copy = copy;
}

LOOM_Stream* DeviceObjects::create_stream() const {
  if (virtual_ || cudaSetDevice(device_) != cudaSuccess) return nullptr;
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  auto* stream = new LOOM_Stream{};
  stream->struct_size = LOOM_Stream_STRUCT_SIZE;
  stream->state = new StreamResources(device_, s, blocking_waits_);
  stream->synchronize = [](void* st) noexcept -> LOOM_Status* {
    return static_cast<StreamResources*>(st)->synchronize();
  };
  stream->release = [](LOOM_Stream* self) noexcept {
    auto* state = static_cast<StreamResources*>(self->state);
    const int device = state->device();
    const cudaStream_t s = state->stream();
    delete state;  // frees its scratch on the stream first
    cudaSetDevice(device);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    delete self;
  };
  return stream;
}

LOOM_Event* DeviceObjects::create_event() const {
  if (virtual_ || cudaSetDevice(device_) != cudaSuccess) return nullptr;
  cudaEvent_t e = nullptr;
  // With timing, for elapsed_us.
  if (cudaEventCreateWithFlags(&e, blocking_waits_ ? cudaEventBlockingSync : cudaEventDefault) != cudaSuccess)
    return nullptr;
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
