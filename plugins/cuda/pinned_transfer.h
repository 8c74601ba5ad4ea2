// Host <-> device copies queued on a stream through page-locked staging
// blocks (staging_pool.h), so neither direction makes the host wait for the
// device inside a run, and the DMA runs at pinned-memory speed. The CUDA
// runtime, given pageable memory, stages host-to-device copies itself but
// returns from a device-to-host cudaMemcpyAsync only when the copy is done.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "loom/sdk.h"
#include "staging_pool.h"

namespace loom::cuda {

class PinnedTransfer {
 public:
  // Copies are staged in chunks of kChunkBytes through at most
  // `capacity_bytes` of page-locked memory on `device` (0: never staged).
  static constexpr size_t kChunkBytes = size_t{8} << 20;
  PinnedTransfer(int device, size_t capacity_bytes);

  // Queues a copy of `bytes` from host `src` to device `dst` on `stream`;
  // `src` may be reused when this returns.
  LOOM_Status* to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream);
  // Queues a copy of `bytes` from device `src` to host `dst` on `stream`;
  // `dst` is written when the stream reaches the copy.
  LOOM_Status* to_host(void* dst, const void* src, size_t bytes, cudaStream_t stream);

  StagingStats stats() const { return pool_.stats(); }

 private:
  // After a chunk's stream work was queued (or failed part-way): records the
  // block's fence, or, if that fails, drains the stream so the block is free.
  LOOM_Status* settle(StagingPool::Block* block, size_t bytes, cudaStream_t stream, LOOM_Status* queued);

  StagingPool pool_;
};

}  // namespace loom::cuda
