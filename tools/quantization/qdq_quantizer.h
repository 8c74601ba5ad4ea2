// Static quantization into the QDQ format: QuantizeLinear / DequantizeLinear
// pairs around the activations of the chosen ops, int8 weights behind
// DequantizeLinear, int32 Conv biases -- the format ONNX Runtime's
// quantize_static(quant_format=QDQ) writes, so the model stays valid ONNX
// that any runtime loads, runs unfused as the oracle (the reference EP), and
// can be fused into int8 kernels.
//
// Scales and zero points follow ONNX Runtime's compute_scale_zp: the range
// is widened to include 0; activations map [low, high] onto uint8 [0, 255]
// (or int8 [-128, 127]) with scale (high - low) / 255 and zero point
// round(qmin - low / scale) (ties to even); weights are symmetric int8
// [-127, 127] with zero point 0, per tensor or per output channel (Conv:
// axis 0; MatMul: the last axis; Gemm: axis 0 with transB, else 1); a Conv
// bias becomes int32 with scale input_scale * weight_scale. An output read
// only by a Relu or Clip gets its pair after that activation instead, as
// ONNX Runtime places it.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "loom/status.h"
#include "quantization/tensor_range.h"

namespace loom::quant {

struct QdqOptions {
  bool per_channel = false;
  // Activations as int8 (asymmetric, [-128, 127]) instead of uint8.
  bool int8_activations = false;
  // Weights symmetric (zero point 0, ORT's default); false maps each
  // weight's [min, max] onto [-128, 127] with its own zero point.
  bool symmetric_weights = true;
  std::vector<std::string> op_types = {"Conv", "MatMul", "Gemm"};
  std::set<std::string> exclude_nodes;  // by node name
};

struct QdqReport {
  int quantized_nodes = 0;
  int activations = 0;  // tensors given a QuantizeLinear / DequantizeLinear pair
  int weights = 0;      // initializers stored as int8
  int biases = 0;       // Conv biases stored as int32
  // Nodes of the chosen op types left in float, with the reason.
  std::vector<std::pair<std::string, std::string>> skipped;
};

// Rewrites `model` (top-level graph) in place. Nodes whose float
// activations lack a range in `ranges` or whose weights are not float
// initializers are left in float and listed in the report. Errors: an
// opset below 10 (13 with per_channel), initializers with external data.
Expected<QdqReport> quantize_qdq(::onnx::ModelProto& model, const std::map<std::string, TensorRange>& ranges,
                                 const QdqOptions& options);

}  // namespace loom::quant
