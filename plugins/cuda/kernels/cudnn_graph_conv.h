// A 2-D forward convolution through cuDNN's graph API (the backend
// descriptors), with its bias, residual input Z and ReLU fused in when
// asked: one execution plan, built once per problem (engine heuristics,
// mode A: the first configuration that finalizes, fits the workspace cap
// and keeps to the numerics asked for), then queued with one
// cudnnBackendExecute per call.
//
// Why: the legacy calls (cudnnConvolutionForward and the fused
// cudnnConvolutionBiasActivationForward) cost 45-400 us of host time per
// call under IMPLICIT_PRECOMP_GEMM, the algorithm cuDNN's heuristics rank
// first for ResNet's convolutions, and hold the host until the device has
// run them (bench/gpu/cudnn_host_cost.cu on an H200); a run of ResNet-50
// at batch 128 in float16 is bound by that host time.
//
// Plain C++ over cudnn.h (no Loom headers), so the host-cost probe
// measures this same code. Errors throw std::runtime_error naming the
// cuDNN call and status.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::cuda {

struct GraphConvShape {
  // Logical dims in NCHW order: x [N, C, H, W], w [K, C / groups, R, S],
  // y [N, K, P, Q]; groups follow from C / w[1].
  int64_t x[4] = {}, w[4] = {}, y[4] = {};
  int64_t pads[2] = {}, strides[2] = {1, 1}, dilations[2] = {1, 1};
  // Memory order of x, y and z: NHWC (w as KRSC) or NCHW (w as KCRS).
  bool nhwc = false;
  cudnnDataType_t data = CUDNN_DATA_FLOAT;  // x, w, y, bias, z
  // false: engines cuDNN notes as using tensor cores are skipped (float32
  // without TF32).
  bool tensor_cores = true;
  bool bias = false, z = false, relu = false;  // y = relu(conv + bias + z)
  int64_t alignment = 16;                       // bytes every pointer is aligned to
};

class GraphConvPlan {
 public:
  // Builds the plan on handle h; throws std::runtime_error when cuDNN
  // offers no engine for it.
  GraphConvPlan(cudnnHandle_t h, const GraphConvShape& s, size_t workspace_cap);
  ~GraphConvPlan();
  GraphConvPlan(const GraphConvPlan&) = delete;
  GraphConvPlan& operator=(const GraphConvPlan&) = delete;

  size_t workspace_bytes() const { return workspace_; }
  // Which engine heuristics rank gave the plan (0: the first).
  int engine_rank() const { return rank_; }
  // Queues the plan on h's stream. Pointers are device memory; bias and z
  // are read only when the shape asked for them.
  cudnnStatus_t run(cudnnHandle_t h, const void* x, const void* w, void* y, const void* bias, const void* z,
                    void* workspace) const;

 private:
  std::vector<cudnnBackendDescriptor_t> owned_;  // every descriptor the plan was built from
  cudnnBackendDescriptor_t plan_ = nullptr;
  size_t workspace_ = 0;
  int rank_ = -1;
  bool bias_ = false, z_ = false;
};

}  // namespace loom::cuda
