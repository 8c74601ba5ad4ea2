// CUDA runtime, cuBLAS and cuDNN errors as SDK errors (statuses at the
// ABI), naming the call that failed.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "cuda_check.h"

namespace loom::cuda {

inline void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw sdk::Error(std::string("cuda: ") + what + ": " + cublasGetStatusString(s), LOOM_STATUS_FAIL);
}

inline void check_dnn(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw sdk::Error(std::string("cuda: ") + what + ": " + cudnnGetErrorString(s),
                     s == CUDNN_STATUS_NOT_SUPPORTED ? LOOM_STATUS_NOT_IMPLEMENTED : LOOM_STATUS_FAIL);
}

// After a kernel launch: the launch error, if any.
inline void check_launch(const char* what) { check(cudaGetLastError(), what); }

}  // namespace loom::cuda
