// The CUDA EP's device objects behind the ABI: the device allocator, the
// data transfer (host <-> device, device <-> device, asynchronous on a
// stream), streams (non-blocking cudaStream_t) and events (with timing, for
// the profiler's device lane). Each object sets its device before CUDA calls.
#pragma once

#include <cuda_runtime.h>

#include "loom/sdk.h"

namespace loom::cuda {

constexpr char kMemoryName[] = "cuda";

// The cudaStream_t behind a host stream (NULL stream: the legacy default).
cudaStream_t native(LOOM_Stream* stream);

class DeviceObjects {
 public:
  explicit DeviceObjects(int device);
  int device() const { return device_; }
  const LOOM_MemoryInfo* memory() const { return &memory_; }
  const LOOM_Allocator* allocator() const { return &allocator_; }
  const LOOM_DataTransfer* data_transfer() const { return &transfer_; }
  LOOM_Stream* create_stream() const;
  LOOM_Event* create_event() const;

 private:
  int device_;
  LOOM_MemoryInfo memory_{};
  LOOM_Allocator allocator_{};
  LOOM_DataTransfer transfer_{};
};

}  // namespace loom::cuda
