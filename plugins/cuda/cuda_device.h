// The CUDA EP's device objects behind the ABI: the device allocator, the
// data transfer (host <-> device, device <-> device, asynchronous on a
// stream), streams (non-blocking cudaStream_t, each with its library handles
// and scratch: stream_resources.h) and events (with timing, for the
// profiler's device lane). Each object sets its device before CUDA calls.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "loom/sdk.h"
#include "pinned_transfer.h"

namespace loom::cuda {

constexpr char kMemoryName[] = "cuda";

// The cudaStream_t behind a host stream (NULL stream: the legacy default).
cudaStream_t native(LOOM_Stream* stream);

// Free memory of CUDA device `device` now (cudaMemGetInfo), 0 when it
// cannot be read.
size_t free_device_memory(int device);

// What a virtual device (option virtual_device) answers when asked to run.
constexpr char kVirtualDeviceMessage[] =
    "cuda: this is a virtual device (provider option virtual_device): it can be partitioned against but not run";

class DeviceObjects {
 public:
  // `is_virtual`: no GPU behind it; allocations and copies fail with
  // kVirtualDeviceMessage, and no streams are made (so the host plans it
  // as a synchronous device). Copies on a stream go through up to
  // `staging_bytes` of page-locked host memory (pinned_transfer.h). With
  // `blocking_waits`, the host sleeps in event and stream waits instead of
  // polling (cudaEventBlockingSync).
  DeviceObjects(int device, bool is_virtual, size_t staging_bytes, bool blocking_waits);
  int device() const { return device_; }
  const LOOM_MemoryInfo* memory() const { return &memory_; }
  const LOOM_Allocator* allocator() const { return &allocator_; }
  const LOOM_DataTransfer* data_transfer() const { return &transfer_; }
  LOOM_Stream* create_stream() const;
  LOOM_Event* create_event() const;
  bool is_virtual() const { return virtual_; }
  StagingStats staging_stats() const { return transfer_state_.pinned->stats(); }

  // What the allocator and transfer read.
  struct TransferState {
    int device;  // -1 when virtual
    std::unique_ptr<PinnedTransfer> pinned;
  };

 private:
  int device_;
  bool virtual_;
  bool blocking_waits_;
  TransferState transfer_state_;
  LOOM_MemoryInfo memory_{};
  LOOM_Allocator allocator_{};
  LOOM_DataTransfer transfer_{};
};

}  // namespace loom::cuda
