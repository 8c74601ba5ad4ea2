// CUDA runtime errors as SDK errors (statuses at the ABI), naming the call.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "loom/sdk.h"

namespace loom::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw sdk::Error(std::string("cuda: ") + what + ": " + cudaGetErrorString(e), LOOM_STATUS_FAIL);
}

// The same for slots that return a status instead of throwing.
inline LOOM_Status* status_of(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return nullptr;
  return sdk::make_status(LOOM_STATUS_FAIL, std::string("cuda: ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace loom::cuda
