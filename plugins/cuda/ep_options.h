// The cuda provider options (config `provider_options.cuda`), parsed once
// when the factory lists devices and again when the EP is created. Names
// follow ONNX Runtime's CUDA provider where it has one (`device_id`,
// `cudnn_conv_algo_search`, `use_tf32`), so configs carry over.
#pragma once

#include <string>
#include <vector>

#include "loom/sdk.h"

namespace loom::cuda {

enum class ConvAlgoSearch { kHeuristic, kExhaustive };
enum class Precision { kFloat32, kFloat16 };
enum class PreferNhwc { kAuto, kOn, kOff };
enum class ConvApi { kLegacy, kGraph };

struct EpOptions {
  // `virtual_device` (true / false, default false): on a machine without a
  // usable GPU, offer one virtual device that can be partitioned against
  // (`loom partition`) but not run; ignored where a real GPU is present.
  bool virtual_device = false;
  // `device_id` (default 0): the CUDA device the EP runs on.
  int device_id = 0;
  // `use_tf32` (true / false, default false): float32 matrix products and
  // convolutions may use TF32 tensor cores (10-bit mantissa inputs).
  bool use_tf32 = false;
  // `cudnn_conv_algo_search` (HEURISTIC or EXHAUSTIVE, default HEURISTIC;
  // ORT's DEFAULT reads as HEURISTIC): how a convolution's algorithm is
  // chosen, once per (shape, type, layout).
  ConvAlgoSearch conv_algo_search = ConvAlgoSearch::kHeuristic;
  // `precision` (fp32 or fp16, default fp32): fp16 runs a float32 model's
  // convolutions and matrix products on float16 copies of their operands
  // with float accumulation (kernels/half_operands.h); the other ops, and
  // the model's inputs and outputs, stay float32.
  Precision precision = Precision::kFloat32;
  // `pinned_staging_mb` (default 64; 0 turns staging off): page-locked host
  // memory that copies between host and device on a run's stream go
  // through (pinned_transfer.h), in 8 MiB chunks; a copy finding it all in
  // use waits for the oldest chunk. Held per EP, given back when the EP goes.
  int pinned_staging_mb = 64;
  // `host_wait` (block or spin, default block): how the host waits for the
  // device (the end of a run, a CPU node's input): block sleeps until the
  // device signals (no core kept busy while a long batch runs); spin polls,
  // some microseconds sooner after short kernels.
  bool host_wait_blocks = true;
  // `enable_cuda_graph` (true / false, default false; ONNX Runtime's name):
  // the second run with given input shapes is captured as a CUDA graph and
  // later runs with those shapes replay it (graph_capture.h; the host's
  // exec/run_recorder.h says when a plan qualifies).
  bool cuda_graph = false;
  // `conv_workspace_mb` (default: automatic): the most workspace one
  // convolution's algorithm may use. Automatic (ONNX Runtime's
  // cudnn_conv_use_max_workspace=1, its default) is a quarter of the
  // device's free memory when the EP is made, between 256 MiB and 4 GiB:
  // cuDNN's tensor-core algorithms transform whole batches, and a 256 MiB
  // cap left ResNet-50 at batch 128 and 512x512 on slow FMA algorithms.
  // `cudnn_conv_use_max_workspace=0` is ONNX Runtime's 32 MiB.
  int64_t conv_workspace_mb = -1;  // -1: automatic
  // `prefer_nhwc` (auto, true or false; default auto; ONNX Runtime's name):
  // which 2-D convolutions and pools the EP takes in channels-last form
  // (the core's layout phase, transform/passes/channels_last.h, then rewrites
  // them between Transposes that cancel along a chain). auto: where they
  // run on tensor cores, which read NHWC natively -- float16, and float32
  // with use_tf32 or precision fp16; true: float32 too; false: none.
  // (Leaving grouped float32 convolutions NCHW under auto was measured on
  // an H200 and dropped: MobileNetV2 with TF32 went from 21.1 to 14.4 ms at
  // batch 128 but from 3.0 to 6.9 ms at batch 1, where the Transposes
  // around each depthwise step cost host time;
  // bench/results/gpu-benchmark-2026-11-27-lease2.md.)
  PreferNhwc prefer_nhwc = PreferNhwc::kAuto;
  // `cudnn_fused_conv` (true / false, default true): a convolution's bias,
  // ReLU and residual input go into cuDNN's fused call
  // (cudnnConvolutionBiasActivationForward) where it takes them; false:
  // the plain convolution, then Loom's epilogue pass over Y (one more pass
  // over memory, a cheaper call on the host).
  bool cudnn_fused_conv = true;
  // `cudnn_conv_api` (legacy or graph, default legacy): how 2-D forward
  // convolutions call cuDNN. legacy: cudnnConvolutionForward /
  // cudnnConvolutionBiasActivationForward under the algorithm chosen by
  // cudnn_conv_algo_search; graph: a graph-API execution plan per problem
  // and stream, bias, Z and ReLU fused in where an engine takes them
  // (kernels/cudnn_graph_conv.h), 6-12 us of host time per call against
  // the legacy calls' 37-160 us on an H200. A problem no graph engine
  // takes runs the legacy way.
  ConvApi conv_api = ConvApi::kLegacy;
};

// The element types whose 2-D convolutions and pools the EP takes in
// channels-last form under `options` (prefer_nhwc); empty for none.
std::vector<int32_t> nhwc_types(const EpOptions& options);

// The convolution workspace cap in bytes for `options` on a device with
// `free_bytes` of free memory (0: unknown, as on a virtual device).
size_t conv_workspace_bytes(const EpOptions& options, size_t free_bytes);

// Throws sdk::Error (INVALID_ARGUMENT) naming the option on a bad value or
// an unknown key. `intra_op_threads` (every EP gets it) is accepted.
EpOptions parse_ep_options(const sdk::Options& options);

}  // namespace loom::cuda
