#include "pinned_transfer.h"

#include <algorithm>
#include <cstring>

#include "cuda_check.h"

namespace loom::cuda {
namespace {

StagingPool::Backend pinned_backend(int device) {
  StagingPool::Backend b;
  b.alloc = [device](size_t bytes) -> void* {
    void* p = nullptr;
    if (cudaSetDevice(device) != cudaSuccess || cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess)
      return nullptr;
    return p;
  };
  b.free = [](void* p) { cudaFreeHost(p); };
  b.make_fence = [device]() -> void* {
    cudaEvent_t e = nullptr;
    if (cudaSetDevice(device) != cudaSuccess || cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess)
      return nullptr;
    return e;
  };
  b.destroy_fence = [](void* f) { cudaEventDestroy(static_cast<cudaEvent_t>(f)); };
  // A fence whose query fails (a device error) counts as passed: the error
  // surfaces on the stream's next call, and the block is not stuck.
  b.fence_passed = [](void* f) { return cudaEventQuery(static_cast<cudaEvent_t>(f)) != cudaErrorNotReady; };
  b.wait_fence = [](void* f) { cudaEventSynchronize(static_cast<cudaEvent_t>(f)); };
  return b;
}

// What the stream callback of a device-to-host chunk copies.
struct CopyOut {
  void* dst;
  const void* src;
  size_t bytes;
};

void CUDART_CB copy_out(void* p) {
  auto* c = static_cast<CopyOut*>(p);
  std::memcpy(c->dst, c->src, c->bytes);
  delete c;
}

}  // namespace

PinnedTransfer::PinnedTransfer(int device, size_t capacity_bytes)
    : pool_(pinned_backend(device), capacity_bytes, kChunkBytes) {}

LOOM_Status* PinnedTransfer::settle(StagingPool::Block* block, size_t bytes, cudaStream_t stream,
                                    LOOM_Status* queued) {
  if (cudaEventRecord(static_cast<cudaEvent_t>(block->fence), stream) == cudaSuccess) {
    pool_.mark_in_flight(block, bytes);
    return queued;
  }
  cudaStreamSynchronize(stream);
  pool_.give_back(block);
  return queued != nullptr ? queued : status_of(cudaErrorUnknown, "cudaEventRecord (staging fence)");
}

LOOM_Status* PinnedTransfer::to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(pool_.chunk_bytes(), bytes - done);
    StagingPool::Block* block = pool_.acquire(n);
    if (block == nullptr)  // the runtime stages the rest itself
      return status_of(cudaMemcpyAsync(out + done, in + done, bytes - done, cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync");
    std::memcpy(block->host, in + done, n);
    const cudaError_t e = cudaMemcpyAsync(out + done, block->host, n, cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess) {
      pool_.give_back(block);
      return status_of(e, "cudaMemcpyAsync (staged)");
    }
    if (LOOM_Status* s = settle(block, n, stream, nullptr)) return s;
    done += n;
  }
  return nullptr;
}

LOOM_Status* PinnedTransfer::to_host(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(pool_.chunk_bytes(), bytes - done);
    StagingPool::Block* block = pool_.acquire(n);
    if (block == nullptr)  // pageable destination: the runtime copies synchronously
      return status_of(cudaMemcpyAsync(out + done, in + done, bytes - done, cudaMemcpyDeviceToHost, stream),
                       "cudaMemcpyAsync");
    cudaError_t e = cudaMemcpyAsync(block->host, in + done, n, cudaMemcpyDeviceToHost, stream);
    if (e != cudaSuccess) {
      pool_.give_back(block);
      return status_of(e, "cudaMemcpyAsync (staged)");
    }
    auto* job = new CopyOut{out + done, block->host, n};
    e = cudaLaunchHostFunc(stream, copy_out, job);
    if (e != cudaSuccess) {
      delete job;
      return settle(block, n, stream, status_of(e, "cudaLaunchHostFunc (staged copy out)"));
    }
    if (LOOM_Status* s = settle(block, n, stream, nullptr)) return s;
    done += n;
  }
  return nullptr;
}

}  // namespace loom::cuda
